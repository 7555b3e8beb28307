#include "daemon/policy/process_where.h"

#include <algorithm>
#include <string_view>

namespace trainyard::daemon {
namespace {

bool stopped(const ProcessWhere& p) { return p.state == "T" || p.state == "t"; }

bool frame_waits_on_peers(std::string_view frame) {
  for (std::string_view place : {"/torch/distributed/", "/torch/autograd/", "/torch/nn/parallel/distributed.py"}) {
    if (frame.find(place) != std::string_view::npos) return true;
  }
  return false;
}

std::vector<std::string_view> frames_of(std::string_view stack) {
  std::vector<std::string_view> frames;
  while (!stack.empty()) {
    const std::size_t end = std::min(stack.find('\n'), stack.size());
    if (end > 0) frames.push_back(stack.substr(0, end));
    stack.remove_prefix(std::min(end + 1, stack.size()));
  }
  return frames;
}

bool waits_on_peers(const ProcessWhere& p) {
  const auto frames = frames_of(p.stack);
  return std::any_of(frames.begin(), frames.end(), frame_waits_on_peers);
}

std::string_view state_words(const std::string& state) {
  if (state == "R") return "running";
  if (state == "S") return "sleeping";
  if (state == "D") return "in uninterruptible I/O";
  if (state == "T") return "stopped";
  if (state == "t") return "stopped by a debugger";
  if (state == "Z") return "exited, not yet reaped";
  return "in an unknown state";
}

// The last `parts` parts of a frame's path: "ddp.py:40 in main" of "/home/u/ddp.py:40 in main" (1).
std::string_view trimmed(std::string_view frame, int parts) {
  const std::size_t colon = frame.find(':');
  std::size_t cut = colon == std::string_view::npos ? frame.size() : colon;
  for (int i = 0; i < parts; ++i) {
    cut = frame.substr(0, cut).rfind('/');
    if (cut == std::string_view::npos) return frame;
  }
  return frame.substr(cut + 1);
}

bool in_a_library(std::string_view frame) {
  for (std::string_view place : {"/dist-packages/", "/site-packages/", "/usr/lib/python3"}) {
    if (frame.find(place) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

WhereVerdict judge_where(const std::vector<ProcessWhere>& processes) {
  if (std::any_of(processes.begin(), processes.end(), stopped)) return WhereVerdict::stopped;
  bool any_stack = false;
  for (const auto& p : processes) {
    if (p.stack.empty()) continue;
    any_stack = true;
    if (!waits_on_peers(p)) return WhereVerdict::hung_itself;
  }
  return any_stack ? WhereVerdict::waiting_on_peers : WhereVerdict::unknown;
}

std::string where_text(const ProcessWhere& p) {
  std::string text = "pid " + std::to_string(p.pid) + " " + std::string(state_words(p.state));
  if (stopped(p)) return text + " (state " + p.state + ")";
  if (!p.wchan.empty()) text += " in " + p.wchan;
  const auto calls = frames_of(p.stack);
  if (calls.empty()) return text;
  const auto own = std::find_if_not(calls.begin(), calls.end(), in_a_library);
  if (own == calls.end()) return text + ": " + std::string(trimmed(calls.front(), 2));
  text += ": " + std::string(trimmed(*own, 1));
  if (own != calls.begin()) text += " (inside " + std::string(trimmed(calls.front(), 2)) + ")";
  return text;
}

}  // namespace trainyard::daemon
