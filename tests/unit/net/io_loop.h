// Driving an io_context from a test: run it until a condition holds, and a WebSocket session that
// only listens.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <string>

#include "net/websocket.h"

namespace trainyard::net::testing {

// Runs the loop until `condition` holds (true) or five seconds pass (false).
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    io.run_for(std::chrono::milliseconds(5));
  }
  return true;
}

struct SilentSession : WebSocketSession {
  void on_message(std::string) override {}
  void on_closed(const std::string&) override {}
};

}  // namespace trainyard::net::testing
