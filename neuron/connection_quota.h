#pragma once
// Room for connections that have not yet proved themselves on the data plane (docs/DESIGN.md
// "Collectives and the data plane"), kept pure (no sockets, no clock) so it is tested without I/O.
//
// A connection that never says hello costs the server a descriptor until it is dropped; a job on a
// shared node can open hundreds. Refusing new connections once full hands the port to whoever
// holds the most, so here a new connection is always taken and an old one makes room: the oldest of
// its own source when that source already holds `per_source`, otherwise (the total full) the oldest
// of the source that holds the most. A genuine dialer says hello within a round trip of connecting,
// so it is gone from the pool before a flood of its own source's newer connections reaches it, and
// a flood from one source never drops another source's connections while it holds more than they do.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainyard::neuron {

struct ConnectionCaps {
  std::size_t total = 256;
  std::size_t per_source = 64;
};

class ConnectionQuota {
 public:
  explicit ConnectionQuota(ConnectionCaps caps);

  // The connection to drop before one more from `source` is added; nullopt when there is room.
  std::optional<int> to_drop_for(const std::string& source) const;
  // Records connection `id` (unique while held) from `source`, the newest of its source.
  void add(int id, const std::string& source);
  // Forgets `id` (claimed, closed or dropped); unknown ids are ignored.
  void remove(int id);

  std::size_t held() const { return source_of_.size(); }
  std::size_t held_from(const std::string& source) const;

 private:
  ConnectionCaps caps_;
  std::map<int, std::string> source_of_;
  std::map<std::string, std::vector<int>> by_source_;  // each oldest first
};

}  // namespace trainyard::neuron
