#include "cli/completion.h"

#include <algorithm>

#include "cli/command_line.h"
#include "proto/errors.h"

namespace trainyard::cli {
namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and neighbour swaps.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

constexpr std::size_t kMaxTypoEdits = 2;

// What a bash or zsh script passes: the words after the program and the index of the one being
// completed; what it gets: one candidate a line.
constexpr std::string_view kBashScript =
    R"sh(# trainyard completion for bash: source it, or put it in /etc/bash_completion.d/trainyard
_trainyard() {
  local IFS=$'\n'
  COMPREPLY=($(trainyard __complete "$((COMP_CWORD - 1))" "${COMP_WORDS[@]:1}" 2>/dev/null))
}
complete -o default -F _trainyard trainyard
)sh";

constexpr std::string_view kZshScript = R"sh(#compdef trainyard
# trainyard completion for zsh: put it on $fpath as _trainyard, or source it after compinit
_trainyard() {
  local -a candidates
  candidates=("${(@f)$(trainyard __complete "$((CURRENT - 2))" "${(@)words[2,-1]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _trainyard trainyard
)sh";

const std::vector<std::string>& state_names() {
  static const std::vector<std::string> names = {"PENDING", "STARTING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"};
  return names;
}

bool takes_value(const std::vector<FlagSpec>& flags, std::string_view name) {
  return std::any_of(flags.begin(), flags.end(),
                     [&](const FlagSpec& f) { return f.name == name && !f.value_name.empty(); });
}

std::vector<std::string> flag_names(const std::vector<FlagSpec>& flags) {
  std::vector<std::string> names;
  for (const auto& f : flags) names.push_back(f.name);
  return names;
}

// The registered command spelled by words[head..limit), longest first.
const CommandEntry* command_at(const std::vector<std::string>& words, std::size_t head, std::size_t limit) {
  const CommandEntry* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& entry : command_registry()) {
    const auto path = words_of(entry.path);
    if (head + path.size() > limit || path.size() <= best_length) continue;
    if (std::equal(path.begin(), path.end(), words.begin() + static_cast<std::ptrdiff_t>(head))) {
      best = &entry;
      best_length = path.size();
    }
  }
  return best;
}

// What the command's first positional names in its synopsis ("job ID|ID_N ...", "drain NODE ...").
std::string positional_kind(const CommandEntry& entry) {
  const std::string_view rest = entry.synopsis.substr(std::min(entry.synopsis.size(), entry.path.size() + 1));
  return std::string(rest.substr(0, rest.find_first_of(" .[|")));
}

std::vector<std::string> values_for(std::string_view flag_or_kind, const ServerNames& names) {
  if (flag_or_kind == "ID" || flag_or_kind == "--job" || flag_or_kind == "--before") return names.job_ids();
  if (flag_or_kind == "NODE" || flag_or_kind == "--node") return names.node_names();
  if (flag_or_kind == "--state") return state_names();
  return {};
}

std::vector<std::string> candidates_for(const std::vector<std::string>& words, std::size_t index,
                                        const ServerNames& names) {
  const std::string current = index < words.size() ? words[index] : "";
  // Past the leading global flags and their values.
  std::size_t head = 0;
  while (head < index && words[head].starts_with("-")) head += takes_value(global_flags(), words[head]) ? 2 : 1;
  if (head > index) return {};  // completing a global flag's value
  if (current.starts_with("-") && head == index) return flag_names(global_flags());
  if (head == index) {
    std::vector<std::string> firsts = {std::string(kCompletionCommand)};
    for (const auto& entry : command_registry()) firsts.emplace_back(words_of(entry.path).front());
    return firsts;
  }
  if (words[head] == kCompletionCommand)
    return index == head + 1 ? std::vector<std::string>{"bash", "zsh"} : std::vector<std::string>{};
  const CommandEntry* entry = command_at(words, head, index);
  if (!entry) {  // a group's subcommand
    std::vector<std::string> members;
    for (const auto& e : command_registry()) {
      const auto path = words_of(e.path);
      if (index == head + 1 && path.size() > 1 && path.front() == words[head]) members.emplace_back(path[1]);
    }
    return members;
  }
  std::vector<FlagSpec> flags = entry->flags;
  flags.insert(flags.end(), global_flags().begin(), global_flags().end());
  if (current.starts_with("-")) return flag_names(flags);
  const std::string& previous = words[index - 1];
  if (previous.starts_with("-")) {
    if (takes_value(flags, previous)) return values_for(previous, names);
  }
  return values_for(positional_kind(*entry), names);
}

}  // namespace

std::optional<std::string> nearest_word(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = kMaxTypoEdits + 1;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance && distance < word.size()) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string completion_script(std::string_view shell) {
  if (shell == "bash") return std::string(kBashScript);
  if (shell == "zsh") return std::string(kZshScript);
  throw InvalidInput("SHELL", "must be bash or zsh, got \"" + std::string(shell) + "\"");
}

std::vector<std::string> complete(const std::vector<std::string>& words, std::size_t index, const ServerNames& names) {
  if (index > words.size()) return {};
  const std::string typed = index < words.size() ? words[index] : "";
  std::vector<std::string> out;
  for (auto& candidate : candidates_for(words, index, names)) {
    if (candidate.starts_with(typed) && std::find(out.begin(), out.end(), candidate) == out.end())
      out.push_back(std::move(candidate));
  }
  return out;
}

}  // namespace trainyard::cli
