#include "daemon/base/quoted_output.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "proto/provenance.h"

namespace trainyard::daemon {

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool all_of_alphabet(std::string_view text, std::string_view alphabet) {
  return !text.empty() && text.find_first_not_of(alphabet) == std::string_view::npos;
}

// Credentials recognisable by their shape alone, wherever they are printed: ours (ty_ and 32 hex,
// daemon/base/auth.cpp), GitHub's, Slack's, Hugging Face's, OpenAI-style sk- keys, AWS access key
// ids and JSON Web Tokens.
bool looks_like_credential(std::string_view word) {
  constexpr std::string_view kHex = "0123456789abcdef";
  constexpr std::string_view kTokenChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  const auto prefixed = [&](std::string_view prefix, std::size_t min_rest) {
    return word.starts_with(prefix) && word.size() >= prefix.size() + min_rest &&
           all_of_alphabet(word.substr(prefix.size()), kTokenChars);
  };
  if (word.starts_with("ty_") && word.size() == 35 && all_of_alphabet(word.substr(3), kHex)) return true;
  for (std::string_view prefix : {"ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "xoxb-", "xoxp-", "xoxa-", "hf_", "sk-"}) {
    if (prefixed(prefix, 16)) return true;
  }
  if (word.starts_with("AKIA") && word.size() == 20 && all_of_alphabet(word.substr(4), "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")) return true;
  return word.starts_with("eyJ") && std::count(word.begin(), word.end(), '.') == 2 && word.size() >= 24;
}

// The word, or the word with what it reveals masked. `mask_next` says the word before asked for
// this one to go (it was "PASSWORD:" or "Bearer"); the word may ask the same of the next.
std::string masked_word(std::string_view word, bool& mask_next) {
  const bool masked_by_previous = std::exchange(mask_next, false);
  if (equals_ignoring_case(word, "Bearer") || equals_ignoring_case(word, "Basic")) {
    mask_next = true;  // an HTTP credential follows its scheme
    return std::string(word);
  }
  if (masked_by_previous || looks_like_credential(word)) return std::string(kMaskedValue);
  if (const auto eq = word.find('='); eq != std::string_view::npos && eq > 0 && looks_secret(word.substr(0, eq))) {
    return std::string(word.substr(0, eq + 1)) + std::string(kMaskedValue);
  }
  if (const auto colon = word.find(':'); colon != std::string_view::npos && colon > 0 && looks_secret(word.substr(0, colon))) {
    if (colon + 1 == word.size()) {
      mask_next = true;  // "PASSWORD: hunter2"
      return std::string(word);
    }
    return std::string(word.substr(0, colon + 1)) + std::string(kMaskedValue);  // "password:hunter2"
  }
  return std::string(word);
}

}  // namespace

std::string masked_line(std::string_view line, std::size_t max_chars) {
  std::string out;
  bool mask_next = false;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t end = std::min(line.find_first_of(" \t", at), line.size());
    const std::string_view word = line.substr(at, end - at);
    out += word.empty() ? std::string() : masked_word(word, mask_next);
    if (end < line.size()) out += line[end];
    at = end + 1;
  }
  std::erase_if(out, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "...";
  return out;
}

std::string quoted_tail(std::string_view log_tail, std::size_t max_lines, std::size_t max_chars) {
  constexpr std::size_t kLineChars = 200;
  std::vector<std::string> newest_first;
  std::size_t total = 0;
  std::size_t end = log_tail.size();
  while (end > 0 && newest_first.size() < max_lines) {
    const std::size_t newline = log_tail.rfind('\n', end - 1);
    const std::size_t start = newline == std::string_view::npos ? 0 : newline + 1;
    std::string line = masked_line(log_tail.substr(start, end - start), kLineChars);
    end = newline == std::string_view::npos ? 0 : newline;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (total + line.size() + 1 > max_chars) break;
    total += line.size() + 1;
    newest_first.push_back(std::move(line));
  }
  std::string out;
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) out += (out.empty() ? "" : "\n") + *it;
  return out;
}

}  // namespace trainyard::daemon
