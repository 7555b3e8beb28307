#include "cli/batch_script.h"

#include "proto/errors.h"
#include "proto/job.h"

namespace trainyard::cli {
namespace {

constexpr std::string_view kDirective = "#SBATCH";

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim_left(std::string_view line) {
  while (!line.empty() && is_blank(line.front())) line.remove_prefix(1);
  return line;
}

// The words of a directive's options: blanks separate, '...' and "..." keep blanks (the quotes
// go), and a word beginning with '#' starts a comment.
std::vector<std::string> split_words(std::string_view options, const std::string& where) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (true) {
    while (i < options.size() && is_blank(options[i])) ++i;
    if (i == options.size() || options[i] == '#') return words;
    std::string word;
    while (i < options.size() && !is_blank(options[i])) {
      const char c = options[i++];
      if (c != '\'' && c != '"') {
        word += c;
        continue;
      }
      const std::size_t close = options.find(c, i);
      if (close == std::string_view::npos) throw InvalidInput(where, std::string("#SBATCH has an unterminated ") + c + " quote");
      word.append(options.substr(i, close - i));
      i = close + 1;
    }
    words.push_back(std::move(word));
  }
}

}  // namespace

bool is_batch_script(std::string_view text) { return text.starts_with(kScriptStart); }

std::vector<Directive> sbatch_directives(std::string_view path, std::string_view text) {
  std::vector<Directive> directives;
  int number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (number == 1) continue;  // the interpreter line
    const std::string_view content = trim_left(line);
    if (content.empty()) continue;
    if (!content.starts_with('#')) break;  // the first command: sbatch reads no further
    if (!line.starts_with(kDirective)) continue;
    const std::string_view options = line.substr(kDirective.size());
    if (!options.empty() && !is_blank(options.front())) continue;  // #SBATCHED, a word of a comment
    directives.push_back({number, split_words(options, std::string(path) + ":" + std::to_string(number))});
  }
  return directives;
}

}  // namespace trainyard::cli
