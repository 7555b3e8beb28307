#pragma once
// Fetches an attempt's rank logs from the agents that ran them (GET /v1/jobs/{id}/logs): one request
// per rank, answered once every rank replied or the timeout passed, with each silent or
// unreachable rank's error in place of its text.
//
// Threading contract: I/O thread only; replies arrive later, through `on_reply`.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/job.h"
#include "proto/messages.h"
#include "proto/timers.h"

namespace trainyard::daemon {

struct RankLog {
  int rank = 0;
  std::string node;
  std::string text;
  std::string error;
  std::int64_t log_bytes = 0;
  bool truncated = false;
};

class LogFetcher {
 public:
  // Sends `message` to the node's agent; false when it is not connected.
  using Send = std::function<bool(const std::string& node, const DaemonMessage& message)>;
  using Done = std::function<void(std::vector<RankLog>)>;

  LogFetcher(Timers& timers, Millis timeout, Send send);

  // The last `tail_lines` of each rank's log (only `rank`'s, if given), by rank.
  void fetch(const Attempt& attempt, std::optional<int> rank, std::int64_t tail_lines, Done done);
  // An agent's answer; one that comes too late, or from a node not asked, changes nothing.
  void on_reply(const std::string& node, const LogReplyMsg& reply);

 private:
  struct Fetch {
    std::vector<RankLog> logs;
    std::size_t outstanding = 0;
    Done done;
  };
  struct Waiter {
    std::int64_t fetch = 0;
    std::size_t slot = 0;  // in the fetch's logs
  };
  void complete(std::int64_t fetch_id);

  Timers& timers_;
  Millis timeout_;
  Send send_;
  std::map<std::int64_t, Fetch> fetches_;
  std::map<std::int64_t, Waiter> waiters_;  // by request id
  std::int64_t next_id_ = 1;                // fetches and requests draw from one sequence
};

}  // namespace trainyard::daemon
