#pragma once
// Command-line flags as data: each command declares its flags in a table, one parser reads any
// argument list against such a table, and help text is generated from the same table, so the
// parser, the help and the error messages cannot drift apart.
//
// Accepted forms: `--flag VALUE`, `--flag=VALUE`, boolean `--flag`, positionals anywhere, and
// `--` after which every argument is taken verbatim (the program of a quick submit). Every
// mistake throws trainyard::InvalidInput whose field is the flag (or positional) at fault.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/errors.h"

namespace trainyard::cli {

struct FlagSpec {
  std::string_view name;        // "--rank"
  std::string_view value_name;  // "R"; empty for a boolean switch
  std::string_view help;
  bool repeatable = false;      // may be given several times (`--env K=V`)
};

struct ParsedArgs {
  std::map<std::string, std::vector<std::string>, std::less<>> values;  // by flag name; switches hold ""
  std::vector<std::string> positionals;
  std::optional<std::vector<std::string>> trailing;  // everything after `--`, when `--` was given
  bool help = false;                                 // `--help` or `-h` before any `--`

  bool has(std::string_view flag) const { return values.contains(flag); }
  std::optional<std::string> opt_string(std::string_view flag) const;
  const std::vector<std::string>& all(std::string_view flag) const;
  // Integer value of `flag` within [min, max]; the error names the flag.
  std::optional<std::int64_t> opt_integer(std::string_view flag, std::int64_t min, std::int64_t max) const;
};

// Reads `args` against `flags`; `context` ("trainyard jobs") appears in errors about unknown flags.
ParsedArgs parse_flags(const std::vector<std::string>& args, const std::vector<FlagSpec>& flags,
                       std::string_view context);

// Parses `text` as an integer in [min, max]; throws InvalidInput(field, ...) otherwise.
std::int64_t parse_integer(std::string_view field, std::string_view text, std::int64_t min, std::int64_t max);

// The "Flags:" block of a help text: one aligned line per flag.
std::string format_flag_help(const std::vector<FlagSpec>& flags);

}  // namespace trainyard::cli
