#include "daemon/base/quoted_output.h"

#include <algorithm>
#include <vector>

#include "proto/provenance.h"

namespace trainyard::daemon {

std::string masked_line(std::string_view line, std::size_t max_chars) {
  std::string out;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t end = std::min(line.find_first_of(" \t", at), line.size());
    const std::string_view word = line.substr(at, end - at);
    const auto eq = word.find('=');
    out += eq != std::string_view::npos && eq > 0 && looks_secret(word.substr(0, eq))
               ? std::string(word.substr(0, eq + 1)) + std::string(kMaskedValue)
               : std::string(word);
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
