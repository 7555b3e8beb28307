#pragma once
// A job's output shown to people who may not read its logs (a failure's suggestion, the webhook
// and Slack messages of its end): what the program said, bounded, its control characters dropped
// and secrets masked: NAME=value and "NAME: value" pairs whose name looks secret as the environment's
// (proto/provenance.h), the credential after "Bearer" or "Basic", and words shaped like a
// known credential (our ty_ tokens, GitHub, Slack, Hugging Face and AWS keys, JSON Web Tokens).
#include <cstddef>
#include <string>
#include <string_view>

namespace trainyard::daemon {

// One line: masked, controls dropped, cut at `max_chars` with "..." after.
std::string masked_line(std::string_view line, std::size_t max_chars = 160);

// The newest lines of `log_tail` (at most `max_lines`, blank ones skipped), each masked and cut at
// 200 characters, oldest first, whole lines only within `max_chars` in all; "" when it says nothing.
std::string quoted_tail(std::string_view log_tail, std::size_t max_lines, std::size_t max_chars);

}  // namespace trainyard::daemon
