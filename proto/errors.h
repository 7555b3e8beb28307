#pragma once
// The project's one error policy (docs/STYLE.md "Errors"):
// - Input from outside the process (HTTP bodies, query strings, agent messages, config files, CLI
//   flags) is validated where it enters. A violation throws `InvalidInput`, which names the field
//   and says what is wrong; the boundary turns it into a 4xx, a refused message or a usage error.
// - Past the boundary, types are trusted. Broken invariants are programming errors and assert.
// - Expected runtime failures inside (a peer that times out, a missing checkpoint) are reported as
//   values by the API that can fail, not thrown across layers.
#include <stdexcept>
#include <string>

namespace trainyard::inline proto {

class InvalidInput : public std::runtime_error {
 public:
  InvalidInput(std::string field, const std::string& message)
      : std::runtime_error(field.empty() ? message : field + ": " + message),
        field_(std::move(field)),
        message_(message) {}
  // Dotted path of the offending field ("retry.attempts", "command.argv[0]"); empty for the body.
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

 private:
  std::string field_;
  std::string message_;
};

}  // namespace trainyard::proto
