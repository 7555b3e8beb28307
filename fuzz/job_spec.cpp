// The job-spec parser on arbitrary bytes: every input is either a spec or an InvalidInput; any
// other exception, a sanitizer report or a spec that does not survive its own JSON form is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proto/job.h"

using namespace trainyard;

namespace {

// A spec the parser accepted must read back from its JSON to the same JSON.
void check_round_trip(const JobSpec& spec, SpecOrigin origin) {
  const Json encoded = to_json(spec);
  if (to_json(parse_job_spec(encoded, origin)) != encoded) std::abort();
}

void parse_as(const Json& document, SpecOrigin origin) {
  try {
    check_round_trip(parse_job_spec(document, origin), origin);
  } catch (const InvalidInput&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Json document;
  try {
    document = parse_json_text(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const InvalidInput&) {
    return 0;
  }
  parse_as(document, SpecOrigin::submitted);
  parse_as(document, SpecOrigin::stored);
  return 0;
}
