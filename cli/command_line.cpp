#include "cli/command_line.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "cli/completion.h"
#include "cli/settings.h"
#include "proto/version.h"

namespace trainyard::cli {
namespace {

constexpr std::string_view kProgram = "trainyard";

template <class C>
constexpr bool changes_state() {
  if constexpr (requires { C::kChangesState; }) {
    return C::kChangesState;
  } else {
    return false;
  }
}

template <class... Commands>
std::vector<CommandEntry> entries_of(std::type_identity<std::variant<Commands...>>) {
  return {CommandEntry{Commands::kPath, Commands::kSynopsis, Commands::kSummary, Commands::flags(),
                       [](const ParsedArgs& args) -> Command { return Commands::parse(args); },
                       changes_state<Commands>()}...};
}

// Other schedulers' commands typed by habit, and what does the same here.
constexpr std::pair<std::string_view, std::string_view> kForeignCommands[] = {
    {"squeue", "\"trainyard jobs\""},
    {"queue", "\"trainyard jobs\""},
    {"sacct", "\"trainyard history\""},
    {"sinfo", "\"trainyard nodes\""},
    {"scontrol", "\"trainyard job ID\" (scontrol show job) or \"trainyard update ID\" (scontrol update)"},
    {"scancel", "\"trainyard cancel ID [ID ...]\""},
    {"kill", "\"trainyard cancel ID\""},
    {"show", "\"trainyard job ID\" (a job) or \"trainyard node NAME\" (a node)"},
    {"describe", "\"trainyard job ID\" (a job) or \"trainyard node NAME\" (a node)"},
    {"status", "\"trainyard jobs\" (your jobs) or \"trainyard nodes\" (the nodes)"},
    {"sbatch", "\"trainyard submit\""},
    {"kubectl", "\"trainyard jobs\", \"trainyard job ID\" and \"trainyard logs ID\""},
};

}  // namespace

std::vector<std::string_view> words_of(std::string_view path) {
  std::vector<std::string_view> words;
  while (!path.empty()) {
    const auto space = path.find(' ');
    words.push_back(path.substr(0, space));
    path = space == std::string_view::npos ? std::string_view() : path.substr(space + 1);
  }
  return words;
}

namespace {

// How many of `args` (from `first`) spell `path`; 0 when they do not.
std::size_t match_length(const std::vector<std::string>& args, std::size_t first, std::string_view path) {
  const auto words = words_of(path);
  if (first + words.size() > args.size()) return 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (args[first + i] != words[i]) return 0;
  }
  return words.size();
}

std::string first_line(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

std::size_t command_width() {
  std::size_t width = 0;
  for (const auto& e : command_registry()) width = std::max(width, e.path.size());
  return width;
}

std::string command_line_of(std::string_view name, std::string_view summary) {
  return "  " + std::string(name) + std::string(std::max(command_width() + 2, name.size() + 2) - name.size(), ' ') +
         first_line(summary) + "\n";
}

std::string command_list(std::string_view group) {
  std::string out;
  for (const auto& e : command_registry()) {
    if (!group.empty() && words_of(e.path).front() != group) continue;
    out += command_line_of(e.path, e.summary);
  }
  return out;
}

std::string command_help(const CommandEntry& entry) {
  std::string out = "Usage: " + std::string(kProgram) + " " + std::string(entry.synopsis) + "\n\n" +
                    std::string(entry.summary) + "\n";
  if (!entry.flags.empty()) out += "\nFlags:\n" + format_flag_help(entry.flags);
  out += "\nGlobal flags (see '" + std::string(kProgram) + " --help'): --server URL, --token-file FILE, --json\n";
  return out;
}

std::string group_help(std::string_view group) {
  return "Usage: " + std::string(kProgram) + " " + std::string(group) + " SUBCOMMAND ...\n\nSubcommands:\n" +
         command_list(group);
}

bool is_group(std::string_view word) {
  return std::any_of(command_registry().begin(), command_registry().end(), [&](const CommandEntry& e) {
    const auto words = words_of(e.path);
    return words.size() > 1 && words.front() == word;
  });
}

std::vector<std::string> group_members(std::string_view group) {
  std::vector<std::string> names;
  for (const auto& e : command_registry()) {
    const auto words = words_of(e.path);
    if (words.size() > 1 && words.front() == group) names.emplace_back(words[1]);
  }
  return names;
}

std::vector<std::string> top_level_words() {
  std::vector<std::string> names;
  for (const auto& e : command_registry()) {
    std::string first(words_of(e.path).front());
    if (std::find(names.begin(), names.end(), first) == names.end()) names.push_back(first);
  }
  names.emplace_back(kCompletionCommand);
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The words worth suggesting for a typo: a command that changes nothing, or a group with one.
std::vector<std::string> suggestible(const std::vector<std::string>& names, std::string_view group = {}) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    const bool read_only = std::any_of(command_registry().begin(), command_registry().end(), [&](const CommandEntry& e) {
      const auto words = words_of(e.path);
      const bool named = group.empty() ? words.front() == name : words.size() > 1 && words.front() == group && words[1] == name;
      return named && !e.changes_state;
    });
    if (read_only || (group.empty() && name == kCompletionCommand)) out.push_back(name);
  }
  return out;
}

// "unknown command" with the nearest name when the word looks like a typo of one that changes
// nothing, or what another scheduler's command is called here; else the list.
std::string unknown_word_problem(std::string_view problem, const std::string& word, const std::vector<std::string>& names,
                                 std::string_view group = {}) {
  if (group.empty()) {
    for (const auto& [foreign, ours] : kForeignCommands) {
      if (word == foreign) return std::string(problem) + "; here, use " + std::string(ours);
    }
  }
  if (auto nearest = nearest_word(word, suggestible(names, group))) {
    return std::string(problem) + "; did you mean \"" + *nearest + "\"?";
  }
  return std::string(problem) + " (one of: " + joined(names) + ")";
}

void apply_globals(const ParsedArgs& args, GlobalOptions& global) {
  if (auto server = args.opt_string("--server")) global.server = server;
  if (auto file = args.opt_string("--token-file")) global.token_file = file;
  if (auto file = args.opt_string("--ca-file")) global.ca_file = file;
  if (args.has("--json")) global.json = true;
}

// Index of the first argument past the leading global flags (and their values).
std::size_t skip_global_flags(const std::vector<std::string>& args) {
  std::size_t i = 0;
  while (i < args.size() && args[i].size() > 1 && args[i].front() == '-' && args[i] != "--") {
    const bool separate_value = (args[i] == "--server" || args[i] == "--token-file" || args[i] == "--ca-file");
    i += separate_value ? 2 : 1;
  }
  return std::min(i, args.size());
}

Invocation parse_after_globals(const std::vector<std::string>& args, Invocation invocation) {
  const std::size_t head = skip_global_flags(args);
  const ParsedArgs globals = parse_flags({args.begin(), args.begin() + static_cast<std::ptrdiff_t>(head)},
                                         global_flags(), kProgram);
  apply_globals(globals, invocation.global);
  if (globals.has("--version")) {
    invocation.action = ShowHelp{version_line(kProgram) + "\n"};
    return invocation;
  }
  if (globals.help) {
    invocation.action = ShowHelp{top_level_help()};
    return invocation;
  }
  if (head == args.size()) throw InvalidInput("COMMAND", "is required (one of: " + joined(top_level_words()) + ")");

  for (const CommandEntry& entry : command_registry()) {
    const std::size_t matched = match_length(args, head, entry.path);
    if (matched == 0) continue;
    const std::string context = std::string(kProgram) + " " + std::string(entry.path);
    std::vector<FlagSpec> flags = entry.flags;
    flags.insert(flags.end(), global_flags().begin(), global_flags().end());
    try {
      const ParsedArgs parsed =
          parse_flags({args.begin() + static_cast<std::ptrdiff_t>(head + matched), args.end()}, flags, context);
      apply_globals(parsed, invocation.global);
      if (parsed.has("--version")) {
        invocation.action = ShowHelp{version_line(kProgram) + "\n"};
        return invocation;
      }
      invocation.action = parsed.help ? std::variant<ShowHelp, Command>(ShowHelp{command_help(entry)})
                                      : std::variant<ShowHelp, Command>(entry.parse(parsed));
    } catch (const InvalidInput& e) {
      throw UsageError(e, context);
    }
    return invocation;
  }

  const std::string& word = args[head];
  if (is_group(word)) {
    const bool wants_help = head + 1 < args.size() && (args[head + 1] == "--help" || args[head + 1] == "-h");
    if (wants_help) {
      invocation.action = ShowHelp{group_help(word)};
      return invocation;
    }
    const std::string problem =
        head + 1 < args.size()
            ? unknown_word_problem("unknown subcommand \"" + args[head + 1] + "\"", args[head + 1], group_members(word), word)
            : "needs a subcommand (one of: " + joined(group_members(word)) + ")";
    throw UsageError(InvalidInput(word, problem), std::string(kProgram) + " " + word);
  }
  throw InvalidInput(word, unknown_word_problem("unknown command", word, top_level_words()));
}

}  // namespace

const std::vector<CommandEntry>& command_registry() {
  static const std::vector<CommandEntry> registry = entries_of(std::type_identity<Command>());
  return registry;
}

const std::vector<FlagSpec>& global_flags() {
  static const std::vector<FlagSpec> flags = {
      {"--server", "URL", "daemon address, e.g. http://127.0.0.1:8080; several, comma-separated (active / standby "
                          "daemons), are tried in turn"},
      {"--token-file", "FILE", "file holding the API token"},
      {"--ca-file", "FILE", "PEM file of the CA that signed an https:// daemon's certificate (default: $TRAINYARD_CA, "
                            "else the system's trust store)"},
      {"--json", "", "print the server's JSON instead of a table"},
      {"--version", "", "print the version and git commit"},
  };
  return flags;
}

Invocation parse_command_line(const std::vector<std::string>& args) {
  try {
    return parse_after_globals(args, Invocation{GlobalOptions{}, ShowHelp{}});
  } catch (const UsageError&) {
    throw;
  } catch (const InvalidInput& e) {
    throw UsageError(e, std::string(kProgram));
  }
}

std::string top_level_help() {
  return "Usage: " + std::string(kProgram) +
         " [--server URL] [--token-file FILE] [--ca-file FILE] [--json] COMMAND ...\n\n" +
         "The command-line client of a Trainyard cluster (the daemon's REST API).\n\nCommands:\n" + command_list("") +
         command_line_of(std::string(kCompletionCommand) + " bash|zsh",
                         "Print a shell completion script: source <(trainyard completion bash)") +
         "\nGlobal flags:\n" + format_flag_help(global_flags()) +
         "\nThe daemon address and the token come together from one place: --server with --token-file,\nelse $" +
         std::string(kServerEnv) + " with $" + std::string(kTokenEnv) + " (the token itself), else the files " +
         std::string(kLocalAddrFile) + "\nwith " + std::string(kLocalTokenFile) +
         " in the current directory (the local cluster's). A token is never\nsent to a server named elsewhere. An https:// "
         "server is verified with --ca-file, else $" +
         std::string(kCaEnv) + ",\nelse " + std::string(kLocalCaFile) +
         " (for the local cluster's server), else the system's trust store.\n\nRun '" + std::string(kProgram) +
         " COMMAND --help' for a command's flags.\n";
}

}  // namespace trainyard::cli
