// Operator-supplied failure rules (--failure-rules FILE) on arbitrary bytes: a document parses or
// is refused with InvalidInput; parsed rules then classify a few attempts without failing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "daemon/base/failure_rules.h"

using namespace trainyard;
using namespace trainyard::daemon;

namespace {

void classify_samples(const FailureRules& rules) {
  AttemptFacts exited;
  exited.exit_code = 137;
  exited.reason = "exit code 137";
  exited.log_tail = "RuntimeError: CUDA out of memory\n";
  AttemptFacts signalled;
  signalled.signal = 9;
  signalled.node_lost = true;
  AttemptFacts stuck;
  stuck.stuck = true;
  stuck.node_failed_check = true;
  stuck.reason = "collective_timeout: rank 3 did not answer within 30 s";
  for (const AttemptFacts& facts : {exited, signalled, stuck, AttemptFacts{}}) {
    rules.classify(facts);
    rules.followed_by(FailureRules::defaults()).classify(facts);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    classify_samples(FailureRules::parse(parse_json_text(std::string_view(reinterpret_cast<const char*>(data), size)),
                                         "failure_rules"));
  } catch (const InvalidInput&) {
  }
  return 0;
}
