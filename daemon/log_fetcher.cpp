#include "daemon/log_fetcher.h"

#include <utility>

namespace trainyard::daemon {

LogFetcher::LogFetcher(Timers& timers, Millis timeout, Send send)
    : timers_(timers), timeout_(timeout), send_(std::move(send)) {}

void LogFetcher::fetch(const Attempt& attempt, std::optional<int> rank, std::int64_t tail_lines, Done done) {
  const std::int64_t fetch_id = next_id_++;
  Fetch& fetch = fetches_[fetch_id];
  fetch.done = std::move(done);
  for (int r = 0; r < static_cast<int>(attempt.nodes.size()); ++r) {
    if (rank && *rank != r) continue;
    const std::string& node = attempt.nodes[static_cast<std::size_t>(r)];
    const std::int64_t request_id = next_id_++;
    RankLog log{r, node, "", ""};
    if (send_(node, LogRequestMsg{request_id, attempt.id, tail_lines, kMaxLogReplyBytes})) {
      log.error = "node " + node + " did not answer within " + std::to_string(timeout_.count()) + " ms";
      waiters_[request_id] = Waiter{fetch_id, fetch.logs.size()};
      ++fetch.outstanding;
    } else {
      log.error = "node " + node + " is not connected";
    }
    fetch.logs.push_back(std::move(log));
  }
  if (fetch.outstanding == 0) return complete(fetch_id);
  timers_.after(timeout_, [this, fetch_id] { complete(fetch_id); });
}

void LogFetcher::complete(std::int64_t fetch_id) {
  auto it = fetches_.find(fetch_id);
  if (it == fetches_.end()) return;
  Fetch fetch = std::move(it->second);
  fetches_.erase(it);
  std::erase_if(waiters_, [fetch_id](const auto& kv) { return kv.second.fetch == fetch_id; });
  fetch.done(std::move(fetch.logs));
}

void LogFetcher::on_reply(const std::string& node, const LogReplyMsg& reply) {
  auto waiter = waiters_.find(reply.request_id);
  if (waiter == waiters_.end()) return;  // answered too late
  Fetch& fetch = fetches_.at(waiter->second.fetch);
  RankLog& log = fetch.logs[waiter->second.slot];
  if (log.node != node) return;
  const std::int64_t fetch_id = waiter->second.fetch;
  waiters_.erase(waiter);
  log.text = reply.text;
  log.error = reply.error;
  log.log_bytes = reply.log_bytes;
  log.truncated = reply.truncated;
  if (--fetch.outstanding == 0) complete(fetch_id);
}

}  // namespace trainyard::daemon
