// What a command line asks of the API, and which field it is refused on: shared by the CLI's tests
// of commands and their arguments.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "cli/command_line.h"

namespace trainyard::cli::testing {

inline std::vector<ApiRequest> requests_of(const std::vector<std::string>& args, const InputReader& read = {}) {
  return requests_for(std::get<Command>(parse_command_line(args).action), read);
}

inline ApiRequest get(std::string target) { return {"GET", std::move(target), std::nullopt}; }

// The field a refused command line names, or "<accepted>".
inline std::string rejected(const std::vector<std::string>& args) {
  try {
    parse_command_line(args);
  } catch (const UsageError& e) {
    return e.field();
  }
  return "<accepted>";
}

}  // namespace trainyard::cli::testing
