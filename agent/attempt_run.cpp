#include "agent/attempt_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "proto/text.h"

namespace trainyard::agent {
namespace {

// A line longer than this is shown by its two ends, so a 10 MB line (a printed tensor, a progress
// bar redrawn with \r) does not fill the whole reply and hide the lines before it.
constexpr std::int64_t kLongLineBytes = 16 * 1024;
constexpr std::int64_t kLongLineEndBytes = 2 * 1024;
// How far back from the end a reply looks for lines at most, however long they are.
constexpr std::int64_t kMaxScanBytes = 64 << 20;
constexpr std::int64_t kScanChunkBytes = 64 * 1024;

std::string read_at(int fd, std::int64_t offset, std::int64_t length) {
  std::string text(static_cast<std::size_t>(length), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), offset);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

// Where the line whose last byte is at `last` starts: just past the newline before it, 0 at the
// file's start, or `floor` when none was found down to it.
std::int64_t line_start(int fd, std::int64_t last, std::int64_t floor) {
  std::int64_t end = last;  // search [.., end): the line's own final newline is not its start
  while (end > floor) {
    const std::int64_t from = std::max(floor, end - kScanChunkBytes);
    const std::string chunk = read_at(fd, from, end - from);
    if (const auto newline = chunk.rfind('\n'); newline != std::string::npos) return from + static_cast<std::int64_t>(newline) + 1;
    if (static_cast<std::int64_t>(chunk.size()) < end - from) return floor;  // the file shrank under us
    end = from;
  }
  return floor;
}

// Drops the first bytes of a UTF-8 character cut off by the end of `text`.
std::string_view drop_partial_utf8_suffix(std::string_view text) {
  std::size_t lead = text.size();
  std::size_t continuation = 0;
  while (lead > 0 && continuation < 3 && (static_cast<unsigned char>(text[lead - 1]) & 0xC0) == 0x80) {
    --lead;
    ++continuation;
  }
  if (lead == 0) return text;
  const auto first = static_cast<unsigned char>(text[lead - 1]);
  const std::size_t wanted = first >= 0xF0 ? 3 : first >= 0xE0 ? 2 : first >= 0xC0 ? 1 : 0;
  return continuation < wanted ? text.substr(0, lead - 1) : text;
}

// The line [start, end) as a reply shows it: whole, or its ends around what was left out.
std::string shown_line(int fd, std::int64_t start, std::int64_t end) {
  if (end - start <= kLongLineBytes) return read_at(fd, start, end - start);
  const std::string head = read_at(fd, start, kLongLineEndBytes);
  const std::string_view head_text = drop_partial_utf8_suffix(head);
  const std::string tail = read_at(fd, end - kLongLineEndBytes, kLongLineEndBytes);
  const std::int64_t left_out = end - start - static_cast<std::int64_t>(head_text.size()) - kLongLineEndBytes;
  return std::string(head_text) + " [... " + std::to_string(left_out) + " bytes of this line not shown ...] " +
         std::string(drop_partial_utf8_prefix(tail));
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
  // Whole lines, newest first, like tail -n, each long one shortened, within max_bytes in all.
  const std::int64_t floor = std::max<std::int64_t>(0, st.st_size - kMaxScanBytes);
  std::vector<std::string> newest_first;
  std::int64_t shown = 0;
  std::int64_t end = st.st_size;
  while (end > floor && (max_lines <= 0 || static_cast<std::int64_t>(newest_first.size()) < max_lines)) {
    const std::int64_t start = line_start(fd, end - 1, floor);
    std::string line = shown_line(fd, start, end);
    if (shown + static_cast<std::int64_t>(line.size()) > max_bytes) {
      // Not even one whole line fits (a progress bar without newlines): its end, on a whole character.
      if (newest_first.empty()) newest_first.emplace_back(utf8_tail(line, static_cast<std::size_t>(max_bytes)));
      break;
    }
    tail.truncated = tail.truncated || line.size() != static_cast<std::size_t>(end - start);
    shown += static_cast<std::int64_t>(line.size());
    newest_first.push_back(std::move(line));
    end = start;
  }
  ::close(fd);
  tail.truncated = tail.truncated || end > 0;
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) tail.text += *it;
  return tail;
}

std::string read_exit_tail(const std::string& path) { return read_log_tail(path, kExitTailBytes).text; }

}  // namespace trainyard::agent
