#pragma once
// The HTTP server's open connections by id, each with how to end it, whatever its stream's type:
// what a graceful shutdown (stop_accepting, tell_websockets_going_away) and stop() reach. No Beast.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

namespace trainyard::net {

struct OpenConnections {
  std::unordered_map<std::uint64_t, std::function<void()>> closers;
  // Keep-alive connections waiting for their next request.
  std::unordered_map<std::uint64_t, std::function<void()>> idle;
  std::unordered_map<std::uint64_t, std::function<void(std::string)>> websockets;
  // Streaming responses being written.
  std::unordered_map<std::uint64_t, std::function<void()>> streams;
  std::size_t in_flight = 0;  // requests read whose answer is not yet written
  std::uint64_t next_id = 1;

  // Each closer may erase its own entry (or others): they are called on copies.
  std::size_t close_idle() {
    auto waiting = std::exchange(idle, {});
    for (auto& [id, close] : waiting) close();
    return waiting.size();
  }
  void end_streams() {
    auto open = streams;
    for (auto& [id, end] : open) end();
  }
  void close_all() {
    auto open = closers;
    for (auto& [id, close] : open) close();
  }
  std::size_t tell_websockets_going_away(const std::string& reason) {
    auto open = websockets;
    for (auto& [id, go_away] : open) go_away(reason);
    return open.size();
  }
};

}  // namespace trainyard::net
