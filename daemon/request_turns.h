#pragma once
// Requests that change one job or one node take turns: the next starts once the one before it was
// answered, so no request is made from memory that holds another's change still being stored.
// Were two in flight, the second's record would carry the first, and when the first failed, putting
// memory back in the order the failures were heard (first, then second) would leave the first's
// change in memory (the second's "before" holds it). Requests to different jobs and nodes, and the
// daemon's own changes, do not wait (daemon/pending_writes.h says how those are kept apart).
//
// Threading contract: I/O thread only.
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>

namespace trainyard::daemon {

class RequestTurns {
 public:
  // Called once the request was answered, exactly once.
  using Answered = std::function<void()>;
  using Request = std::function<void(Answered)>;

  // Runs `request` now when no request for `key` is unanswered, else once those before it are.
  void take(const std::string& key, Request request);
  // Runs `body` in its turn for `key` with a `done` that answers the caller, then ends the turn.
  template <typename Done, typename Body>
  void take_answering(const std::string& key, Done done, Body body) {
    take(key, [done = std::move(done), body = std::move(body)](Answered answered) mutable {
      body(Done([done = std::move(done), answered = std::move(answered)](auto&&... answer) {
        done(std::forward<decltype(answer)>(answer)...);
        answered();
      }));
    });
  }
  // Whether a request for `key` is running (unanswered).
  bool running(const std::string& key) const { return queued_.contains(key); }
  // Requests waiting for their turn (not those running).
  std::size_t waiting() const;

 private:
  void run(const std::string& key, Request request);
  void next(const std::string& key);

  std::map<std::string, std::deque<Request>> queued_;  // a key is here while a request for it runs
};

}  // namespace trainyard::daemon
