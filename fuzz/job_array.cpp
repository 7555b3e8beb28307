// The job-array, job-reference and --depend grammars on arbitrary text: every input is either
// parsed or an InvalidInput; a parsed array must read back from its canonical text to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proto/errors.h"
#include "proto/job_array.h"

using namespace trainyard;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ArraySpec spec = parse_array_spec(text, 1000);
    if (spec.indices.empty() || spec.indices.size() > 1000) std::abort();
    if (parse_array_spec(to_string(spec), 1000) != spec) std::abort();
  } catch (const InvalidInput&) {
  }
  try {
    parse_job_ref(text);
  } catch (const InvalidInput&) {
  }
  try {
    parse_dependency_flag(text);
  } catch (const InvalidInput&) {
  }
  return 0;
}
