#pragma once
// `trainyard [GLOBAL FLAGS] COMMAND [ARGS]` to a typed `Invocation`, and the help texts. The list
// of commands is generated from the `Command` variant (commands.h), so the dispatcher, the
// top-level help and each command's help always agree with what exists.
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/commands.h"
#include "proto/flag_parser.h"

namespace trainyard::cli {

// Flags every command accepts, before or after the command word.
struct GlobalOptions {
  std::optional<std::string> server;      // --server URL
  std::optional<std::string> token_file;  // --token-file FILE
  bool json = false;                      // --json
  std::optional<std::string> ca_file;     // --ca-file FILE
  bool operator==(const GlobalOptions&) const = default;
};

struct ShowHelp {
  std::string text;
};

struct Invocation {
  GlobalOptions global;
  std::variant<ShowHelp, Command> action;
};

// A mistake on the command line: the InvalidInput naming the flag or argument, plus which help
// text would have helped ("trainyard jobs").
class UsageError : public InvalidInput {
 public:
  UsageError(const InvalidInput& cause, std::string help_command)
      : InvalidInput(cause.field(), cause.message()), help_command_(std::move(help_command)) {}
  const std::string& help_command() const { return help_command_; }

 private:
  std::string help_command_;
};

// One registered command, as the parser and help see it.
struct CommandEntry {
  std::string_view path;  // "jobs", "token create"
  std::string_view synopsis;
  std::string_view summary;
  std::vector<FlagSpec> flags;  // the command's own flags (global flags come on top)
  Command (*parse)(const ParsedArgs& args);
  // It submits, stops or changes something (its type says kChangesState): never offered as a
  // "did you mean" for a mistyped word.
  bool changes_state = false;
};

const std::vector<CommandEntry>& command_registry();
// The words of a command's path: "node drain" -> {"node", "drain"}.
std::vector<std::string_view> words_of(std::string_view path);
const std::vector<FlagSpec>& global_flags();

// `args` excludes the program name. Throws UsageError.
Invocation parse_command_line(const std::vector<std::string>& args);

std::string top_level_help();

}  // namespace trainyard::cli
