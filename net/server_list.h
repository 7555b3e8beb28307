#pragma once
// Clients of active / standby daemons (`--server URL1,URL2,...`): which daemon to try next. One
// daemon is active; a standby answers 307 to the active one's URL, or 503 while none is known.
// The agent and the CLI share this choice; it is pure (a list and what a try came to -> the next
// URL), so it is tested without sockets. A credential only ever goes to a URL of the list: a
// redirect elsewhere is refused, naming both URLs.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace trainyard::net {

// The URLs of a comma-separated list, spaces around each trimmed. Throws InvalidInput(field) for
// an empty list, an empty entry or a URL given twice; each URL's own form is the caller's to check.
std::vector<std::string> split_server_list(const std::string& text, const std::string& field);

// What one try at a daemon came to, as far as choosing the next one goes.
struct TryOutcome {
  enum class Kind {
    answered,     // any answer but 503 and 307: the daemon is active (or the request was refused on its merits)
    unreachable,  // no connection, or it broke (the daemon died)
    standby,      // 503: a standby that knows no active daemon yet
    redirected,   // 307 to `location`
  };
  Kind kind = Kind::answered;
  std::string location;  // redirected: the Location header
  std::string detail;    // unreachable: why, for the message naming what was tried
};

// An HTTP status (and Location header) as a TryOutcome; a 307 without a Location is a standby's.
TryOutcome outcome_of_status(int status, const std::string& location);

// How a WebSocket client reports an upgrade the server answered with `status` instead of 101
// ("HTTP 307 to LOCATION: body", "HTTP 503: body", "HTTP 429 (retry after 1 s): body" with the
// answer's Retry-After), and how the agent reads that back: a link that closed for any other reason
// (no connection, the daemon died) is `unreachable`.
std::string refused_upgrade_reason(int status, const std::string& location, const std::string& body,
                                   const std::string& retry_after = "");
TryOutcome outcome_of_link_close(const std::string& reason);
// The wait a refused upgrade asked for (a Retry-After in whole seconds), at most kMaxRetryAfter;
// nullopt when it asked for none.
inline constexpr std::chrono::seconds kMaxRetryAfter{300};
std::optional<std::chrono::seconds> retry_after_of_link_close(const std::string& reason);

// The index of the URL in `servers` that `location` lies under (same scheme, host and port), if any.
std::optional<std::size_t> server_of(const std::vector<std::string>& servers, const std::string& location);

// What to do after a try that was not answered.
struct FailoverStep {
  enum class Kind {
    try_next,   // try current() (the next URL of the list, or the one redirected to)
    exhausted,  // every URL of the list failed in this round; `message` names each and why
    refused,    // a redirect out of the list, or too many redirects; `message` says which
  };
  Kind kind = Kind::try_next;
  std::string message;
};

// A walk over the list. Each round starts at the URL that last answered; a round ends when every
// URL has failed once (a redirect within the list does not count as a failure, but at most
// kMaxRedirects are followed in a round). After `exhausted` or `refused` the next round starts at
// the URL after the failed one, so a caller that keeps trying (the agent) goes around the list.
class Failover {
 public:
  static constexpr int kMaxRedirects = 3;

  // `servers` as given by the user, not empty.
  explicit Failover(std::vector<std::string> servers);

  const std::string& current() const { return servers_[current_]; }
  std::size_t current_index() const { return current_; }
  const std::vector<std::string>& servers() const { return servers_; }

  // A new request: every URL may fail once more before the round is exhausted.
  void begin_round();
  // current() answered: the next round starts there.
  void answered() { begin_round(); }
  // A try at current() was not answered (`outcome.kind` is not `answered`).
  FailoverStep failed(const TryOutcome& outcome);

 private:
  std::string tried_list() const;

  std::vector<std::string> servers_;
  std::size_t current_ = 0;
  std::vector<std::string> tried_;  // this round's failures: "URL (why)"
  int redirects_ = 0;               // in this round
};

}  // namespace trainyard::net
