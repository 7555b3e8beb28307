#pragma once
// Strict settings for the daemon and the agent. Every flag declared with add_* is also a key of the
// config file (`--config FILE`: one JSON object, comments allowed, keys spelled as the flags) and,
// given an environment prefix, an environment variable (prefix + the name in capitals, '-' as '_':
// TRAINYARD_AGENT_WORK_DIR). Precedence: flag > environment > file > default; a list from a higher
// source replaces a lower one's whole. Every source is held to the same checks: an unknown key or
// variable, a wrong type or a value out of range throws InvalidInput naming the key and its source
// (`--cores`, `TRAINYARD_AGENT_CORES`, `/etc/trainyard/agent.json: cores`).
//
// Built in: --config FILE (or PREFIX_CONFIG), --print-config (the effective settings as a config
// file, each commented with where it came from; values of token-, key-, secret- and password-named
// settings redacted), --version, --help.
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/errors.h"

namespace trainyard::inline proto {

// One argument list read against a table of flags: under FlagParser (the daemon's and the agent's
// settings) and under every `trainyard` CLI command, whose help text comes from the same table.
// Accepted forms: `--flag VALUE`, `--flag=VALUE`, boolean `--flag`, positionals anywhere, and
// `--` after which every argument is taken verbatim (the program of a quick submit). Every
// mistake throws InvalidInput whose field is the flag (or positional) at fault.
struct FlagSpec {
  std::string name;        // "--rank"
  std::string value_name;  // "R"; empty for a boolean switch
  std::string help;
  bool repeatable = false;  // may be given several times (`--env K=V`)
  // Other spellings of the same flag, for habits from other tools (`-N` for `--nodes`, as sbatch);
  // parsed values are filed under `name`.
  std::vector<std::string> aliases = {};
};

struct ParsedArgs {
  std::map<std::string, std::vector<std::string>, std::less<>> values;  // by flag name; switches hold ""
  std::vector<std::string> positionals;
  std::optional<std::vector<std::string>> trailing;  // everything after `--`, when `--` was given
  bool help = false;                                 // `--help` or `-h` before any `--`
  bool operator==(const ParsedArgs&) const = default;

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

// Where settings beyond the command line come from; tests and fuzzers pass their own.
struct SettingSources {
  std::vector<std::pair<std::string, std::string>> environment;  // NAME, value
  std::function<std::string(const std::string& path)> read_file;   // throws InvalidInput("--config", ...)

  static SettingSources of_process();  // the process's environment and file system
};

class FlagParser {
 public:
  // `env_prefix` (e.g. "TRAINYARD_AGENT_"): variables with it are settings; empty reads none.
  FlagParser(std::string program, std::string summary, std::string env_prefix = {});

  void add_string(const std::string& name, const std::string& help, std::string* target, bool required = false);
  // A text setting kept in another form (a comma-separated list kept as a set): `get` shows the
  // current value as text, `set` takes a new one and throws InvalidInput for a bad one.
  void add_string(const std::string& name, const std::string& help, std::function<std::string()> get,
                  std::function<void(const std::string&)> set);
  // A whole number in [min, max], kept in the target's integer type.
  template <std::integral T>
  void add_int(const std::string& name, const std::string& help, T* target, std::int64_t min, std::int64_t max) {
    add_int(
        name, help, min, max, [target] { return static_cast<std::int64_t>(*target); },
        [target](std::int64_t value) { *target = static_cast<T>(value); });
  }
  // A duration given as a count of `Unit` ("-ms" flags count milliseconds, "-s" flags seconds),
  // kept in the target's own duration type.
  template <class Unit, class Rep, class Period>
  void add_duration(const std::string& name, const std::string& help, std::chrono::duration<Rep, Period>* target,
                    std::int64_t min, std::int64_t max) {
    using Target = std::chrono::duration<Rep, Period>;
    add_int(
        name, help, min, max,
        [target] { return static_cast<std::int64_t>(std::chrono::duration_cast<Unit>(*target).count()); },
        [target](std::int64_t value) { *target = std::chrono::duration_cast<Target>(Unit(value)); });
  }
  // A percent kept as a fraction: 50 is 0.5.
  void add_percent(const std::string& name, const std::string& help, double* fraction, std::int64_t min,
                   std::int64_t max);
  // A whole number in [min, max] kept in another form: `get` reads the current value, `set` stores one.
  void add_int(const std::string& name, const std::string& help, std::int64_t min, std::int64_t max,
               std::function<std::int64_t()> get, std::function<void(std::int64_t)> set);
  void add_list(const std::string& name, const std::string& help, std::vector<std::string>* target);  // repeatable
  // A switch: `--name` sets it; it takes no value. In a file: true or false; in the environment: 1, 0, true, false.
  void add_bool(const std::string& name, const std::string& help, bool* target);

  // Returns false when the program should print output() and exit 0 (--help, --version,
  // --print-config). Throws InvalidInput naming the key and its source.
  bool parse(int argc, const char* const* argv);
  bool parse(int argc, const char* const* argv, const SettingSources& sources);
  const std::string& output() const { return output_; }
  // Whether a flag, the environment or the config file set `name` (after parse), not its default.
  bool given(const std::string& name) const;
  std::string usage() const;
  // The settings as a config file that --config reads back, each line saying where its value came from.
  std::string effective_config() const;

 private:
  enum class Kind { string, integer, list, boolean };
  enum class Source { default_value, file, environment, flag };
  struct Flag {
    std::string name;
    std::string help;
    std::string default_text;
    Kind kind;
    bool required = false;
    // Checks one value and stores it; `key` names it in the error (`--cores`, `FILE: cores`).
    std::function<void(const std::string& value, const std::string& key)> set;
    std::function<void()> clear;       // a list's items, before a higher source's replace them
    std::function<std::string()> show;  // the current value as JSON
    Source source = Source::default_value;
    std::string origin;  // the flag, variable or file it came from
  };
  // Values one source gives one flag, in order (a repeated flag or list gives several).
  struct Given {
    Flag* flag;
    std::string key;
    std::vector<std::string> values;
  };

  void add(Flag flag);
  Flag* find(const std::string& name);
  std::string env_name(const std::string& flag_name) const;
  std::vector<FlagSpec> command_line_flags() const;
  std::vector<Given> from_environment(const SettingSources& sources, std::string& config_path);
  std::vector<Given> from_file(const std::string& path, const std::string& text);
  void apply(const std::vector<Given>& given, Source source);

  std::string program_;
  std::string summary_;
  std::string env_prefix_;
  std::vector<Flag> flags_;
  std::string config_path_;
  std::string output_;
};

}  // namespace trainyard::proto
