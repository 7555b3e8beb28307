#include "agent/attempt_run.h"

#include <fstream>

#include "proto/text.h"

namespace trainyard::agent {

std::string read_log_tail(const std::string& path, std::int64_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::int64_t size = in.tellg();
  const std::int64_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(start);
  std::string text(static_cast<std::size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (start == 0) return text;
  // Start on a whole line where the tail holds one; a progress bar redrawn with \r has none, and
  // then on a whole character.
  const auto newline = text.find('\n');
  if (newline != std::string::npos && newline + 1 < text.size()) return text.substr(newline + 1);
  return std::string(drop_partial_utf8_prefix(text));
}

}  // namespace trainyard::agent
