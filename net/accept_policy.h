#pragma once
// What the server's accept loop decides, kept pure (no sockets, no clock reads) so it is tested
// without I/O. Out of descriptors, an accept loop without these rules spins at a full core and
// logs ~180 MB in 10 s. After an accept fails for want of resources (descriptors, buffers), the
// loop waits on a proto/backoff.h Backoff (doubling up to a ceiling, no jitter: one server). Two parts:
// - RateLimitedLog: at most one line per interval, saying how many were held back meanwhile.
// - ConnectionLimits: caps on open connections, in total, per remote address while nobody has
//   vouched for them, and per caller once a request has, so one client cannot take every
//   descriptor nor lock another caller at its address out.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace trainyard::net {

using SteadyTime = std::chrono::steady_clock::time_point;

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

// Who a connection's latest request said it is (its Authorization), as the application knows it.
struct Caller {
  std::string key;     // the token's owner: one key's connections share one cap, however many tokens
  bool agent = false;  // an agent's credential: bounded by the total cap only (nodes share addresses with jobs)
};

struct ConnectionCaps {
  std::size_t total = 10'000;
  // Connections no request of which has yet been authenticated, per remote address: all a job on a
  // node can open without a credential, since it shares the node's address with the agent.
  std::size_t per_address = 1'000;
  // Connections whose latest request authenticated as one caller (agents aside).
  std::size_t per_caller = 1'000;
};

enum class Admission { admitted, over_total, over_per_address, over_per_caller };
const char* to_string(Admission a);

// Open connections counted by address until a request says who sent it, then by that caller. A
// connection nobody has vouched for that is waiting for a request is the one that gives way: at a
// cap of anonymous connections, the oldest such (of the address at its cap, or of any at the total
// cap) is evicted to make room, so idle connections held open from a node's address cannot lock
// out the node's agent or an admin there, whose requests authenticate as soon as they arrive.
class ConnectionLimits {
 public:
  using Id = std::uint64_t;  // ids grow with each accept, so the smallest is the oldest
  struct Verdict {
    Admission admission = Admission::admitted;
    std::optional<Id> evict;  // the connection to close to make room; it counts no more
  };

  explicit ConnectionLimits(ConnectionCaps caps) : caps_(caps) {}
  // A connection just accepted from `address`: counted as anonymous and waiting when admitted.
  Verdict admit(Id id, const std::string& address);
  // `id`'s request header named `caller` (nullopt: no credential, or none that holds): it counts
  // against that caller's cap, or its address's anonymous one, from now on. Refused (over a cap,
  // with nothing to evict), it keeps counting as it did until released.
  Verdict identify(Id id, const std::optional<Caller>& caller);
  // Whether `id` waits for a request (idle, or its header still coming): only an anonymous one that
  // waits may be evicted; one being answered, or a WebSocket, never is.
  void waiting(Id id, bool waiting);
  // An admitted connection closed; an evicted or unknown id is ignored.
  void release(Id id);
  // Whether `id` is counted: not once released or evicted.
  bool counts(Id id) const { return connections_.contains(id); }
  std::size_t open() const { return connections_.size(); }
  std::size_t open_from(const std::string& address) const;  // anonymous ones
  std::size_t open_as(const std::string& caller_key) const;

 private:
  struct Connection {
    std::string address;
    std::optional<Caller> caller;
    bool waiting = true;
    bool evictable() const { return !caller && waiting; }
  };
  // Counts `c` where it belongs (its caller's or its address's anonymous connections), or stops.
  void count(Id id, const Connection& c);
  void uncount(Id id, const Connection& c);
  // The oldest evictable anonymous connection of `address`, or of any address.
  std::optional<Id> oldest_evictable(const std::string& address) const;
  std::optional<Id> oldest_evictable() const;

  ConnectionCaps caps_;
  std::map<Id, Connection> connections_;
  std::map<std::string, std::size_t> anonymous_;  // by address
  std::map<std::string, std::size_t> by_caller_;
  std::set<Id> evictable_;
  std::map<std::string, std::set<Id>> evictable_by_address_;
};

}  // namespace trainyard::net
