#include "agent/attempt_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "proto/text.h"

namespace trainyard::agent {
namespace {

// Keeps the last `max_lines` lines of `text` (a final newline ends a line, it does not start one).
std::string_view last_lines(std::string_view text, std::int64_t max_lines, bool& cut) {
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  std::int64_t seen = 0;
  for (std::size_t i = end; i > 0; --i) {
    if (text[i - 1] == '\n' && ++seen == max_lines) {
      cut = true;
      return text.substr(i);
    }
  }
  return text;
}

}  // namespace

LogTail read_log_tail(const std::string& path, std::int64_t max_bytes, std::int64_t max_lines) {
  LogTail tail;
  // The job owns the directory its log is in: it may have put a FIFO, a device or a link to
  // someone else's file in the log's place. Only a regular file is read, and never waited on.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return tail;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return tail;
  }
  tail.readable = true;
  tail.log_bytes = st.st_size;
  const std::int64_t start = std::max<std::int64_t>(0, st.st_size - max_bytes);
  std::string text(static_cast<std::size_t>(st.st_size - start), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), start);
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::string_view kept = text;
  if (start > 0) {
    tail.truncated = true;
    // Start on a whole line where the tail holds one; a progress bar redrawn with \r has none,
    // and then on a whole character.
    const auto newline = kept.find('\n');
    kept = newline != std::string_view::npos && newline + 1 < kept.size() ? kept.substr(newline + 1)
                                                                         : drop_partial_utf8_prefix(kept);
  }
  if (max_lines > 0) kept = last_lines(kept, max_lines, tail.truncated);
  tail.text = std::string(kept);
  return tail;
}

std::string read_exit_tail(const std::string& path) { return read_log_tail(path, kExitTailBytes).text; }

}  // namespace trainyard::agent
