#pragma once
// What the server's accept loop decides, kept pure (no sockets, no clock reads) so it is tested
// without I/O. Out of descriptors, an accept loop without these rules spins at a full core and
// logs ~180 MB in 10 s. Three parts:
// - AcceptBackoff: after an accept fails for want of resources (descriptors, buffers), wait
//   before the next try, doubling up to a ceiling; a success starts again from the first wait.
// - RateLimitedLog: at most one line per interval, saying how many were held back meanwhile.
// - ConnectionLimits: caps on open connections, in total and per remote address, so one client
//   cannot take every descriptor; a connection over a cap is closed at once.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace trainyard::net {

using SteadyTime = std::chrono::steady_clock::time_point;

class AcceptBackoff {
 public:
  AcceptBackoff(std::chrono::milliseconds first, std::chrono::milliseconds ceiling);
  // The wait before the next accept after a failure; each failure in a row doubles it.
  std::chrono::milliseconds after_failure();
  void after_success() { next_ = first_; }

 private:
  std::chrono::milliseconds first_;
  std::chrono::milliseconds ceiling_;
  std::chrono::milliseconds next_;
};

class RateLimitedLog {
 public:
  explicit RateLimitedLog(std::chrono::milliseconds interval) : interval_(interval) {}
  // For one occurrence at `now`: nullopt when its line is held back, else how many were held back
  // since the last line written (which the line should say).
  std::optional<std::uint64_t> occurred(SteadyTime now);

 private:
  std::chrono::milliseconds interval_;
  std::optional<SteadyTime> last_written_;
  std::uint64_t suppressed_ = 0;
};

struct ConnectionCaps {
  std::size_t total = 10'000;
  std::size_t per_address = 1'000;
};

enum class Admission { admitted, over_total, over_per_address };
const char* to_string(Admission a);

class ConnectionLimits {
 public:
  explicit ConnectionLimits(ConnectionCaps caps) : caps_(caps) {}
  // Counts the connection when admitted; an admitted one must be released exactly once.
  Admission admit(const std::string& address);
  void release(const std::string& address);
  std::size_t open() const { return open_; }
  std::size_t open_from(const std::string& address) const;

 private:
  ConnectionCaps caps_;
  std::size_t open_ = 0;
  std::map<std::string, std::size_t> by_address_;
};

}  // namespace trainyard::net
