#pragma once
// What the CLI knows about itself for people typing it: the nearest command to a typo, and shell
// completion (`trainyard completion bash|zsh` prints a script that asks `trainyard __complete`).
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::cli {

// The candidate closest to `word` by edit distance (a swap of two neighbours counts one), when
// it is close enough to be a typo of it: at most 2 edits, and fewer than the word's length.
std::optional<std::string> nearest_word(std::string_view word, const std::vector<std::string>& candidates);

// Commands that need no server: `completion SHELL` and the hidden `__complete INDEX WORDS...`.
inline constexpr std::string_view kCompletionCommand = "completion";
inline constexpr std::string_view kCompleteCommand = "__complete";

// The script for `shell` ("bash" or "zsh"); throws InvalidInput("SHELL") for another.
std::string completion_script(std::string_view shell);

// Names only the server knows, fetched when a completion needs them (and only then).
struct ServerNames {
  std::function<std::vector<std::string>()> job_ids;
  std::function<std::vector<std::string>()> node_names;
};

// Candidates for words[index] (words after the program name; index may be words.size() for a
// new word), already filtered by what was typed of it.
std::vector<std::string> complete(const std::vector<std::string>& words, std::size_t index, const ServerNames& names);

}  // namespace trainyard::cli
