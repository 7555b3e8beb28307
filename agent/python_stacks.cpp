#include "agent/python_stacks.h"

#include <vector>

#include "proto/text.h"

namespace trainyard::agent {
namespace {

struct ThreadStack {
  bool current = false;             // the thread that took the signal
  std::vector<std::string> frames;  // "PATH:N in FUNCTION", most recent first
};

// `  File "PATH", line N in FUNCTION` as "PATH:N in FUNCTION"; the line itself when it is not one.
std::string frame_text(std::string_view line) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  constexpr std::string_view kFile = "File \"";
  constexpr std::string_view kLine = "\", line ";
  const std::size_t path_end = line.rfind(kLine);
  if (!line.starts_with(kFile) || path_end == std::string_view::npos || path_end < kFile.size()) return printable(line);
  const std::string_view path = line.substr(kFile.size(), path_end - kFile.size());
  std::string_view rest = line.substr(path_end + kLine.size());  // "N in FUNCTION"
  const std::size_t space = rest.find(' ');
  const std::string_view number = rest.substr(0, space);
  const std::string_view function = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  return printable(path) + ":" + printable(number) + (function.empty() ? "" : " " + printable(function));
}

std::vector<ThreadStack> threads_of(std::string_view dump) {
  std::vector<ThreadStack> threads;
  bool in_thread = false;
  while (!dump.empty()) {
    const std::size_t end = std::min(dump.find('\n'), dump.size());
    const std::string_view line = dump.substr(0, end);
    dump.remove_prefix(std::min(end + 1, dump.size()));
    const bool header = line.find("(most recent call first):") != std::string_view::npos &&
                        (line.starts_with("Thread ") || line.starts_with("Current thread "));
    if (header) {
      threads.push_back({line.starts_with("Current thread "), {}});
      in_thread = true;
    } else if (line.empty()) {
      in_thread = false;
    } else if (in_thread && line.starts_with("  ")) {
      threads.back().frames.push_back(frame_text(line));
    }
  }
  return threads;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = c < 0x20 || c == 0x7f ? 0 : printable_utf8_length(text, i);
    if (length == 0) {
      out += '?';
      ++i;
    } else {
      out += text.substr(i, length);
      i += length;
    }
  }
  return out;
}

std::string main_thread_stack(std::string_view dump, std::size_t max_chars) {
  const std::vector<ThreadStack> threads = threads_of(dump);
  if (threads.empty()) return "";
  const ThreadStack* chosen = &threads.back();
  bool found_main = false;
  for (const auto& thread : threads) {
    if (!thread.frames.empty() && thread.frames.back().ends_with(" in <module>")) {
      chosen = &thread;  // the last dump's, of several
      found_main = true;
    }
  }
  if (!found_main) {
    for (const auto& thread : threads) {
      if (thread.current) chosen = &thread;
    }
  }
  std::string out;
  for (const auto& frame : chosen->frames) {
    if (out.size() + frame.size() + 1 > max_chars) break;
    out += frame;
    out += '\n';
  }
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace trainyard::agent
