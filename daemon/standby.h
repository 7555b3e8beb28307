#pragma once
// Active / standby daemons on one PostgreSQL store (docs/DESIGN.md "Active and standby"). The daemon
// holding the store's lease is active; the others are standbys, which answer
// /healthz with their role and send everything else to the active one (307 to its advertise URL,
// or 503 while none is known), and try the lease every ttl/5. A standby that takes the lease
// becomes active by the path of a daemon restart: it rebuilds its view from the database, and the
// agents reconnect and report their running attempts.
//
// The pure parts (the answers, ActiveLease's verdicts on a manual clock) are apart from the loop
// that serves a standby's port (serve_as_standby_until_active), which blocks on the store.
#include <functional>
#include <optional>
#include <string>

#include "net/http_server.h"
#include "proto/json_reader.h"
#include "proto/result.h"
#include "proto/time.h"
#include "store/store.h"

namespace trainyard::daemon {

// GET /healthz's body, active or standby: {"status":"ok","version","role","epoch","active_url"}; with
// a `store_problem` (an active daemon whose lease renewals go unconfirmed), "status":"degraded" and
// "store" saying why.
Json healthz_body(const std::string& version, bool active, const store::LeaseState& lease,
                  const std::optional<std::string>& store_problem = std::nullopt);

// A standby's answer to `request`, `lease` being the lease as it last saw it. A lease still held at
// the standby's own URL (`own_url`) is its predecessor's, dead since this process has its port (a
// restart within the ttl): that is no active daemon, not a redirect to itself.
net::HttpResponse standby_answer(const net::HttpRequest& request, const store::LeaseState& lease,
                                 const std::string& own_url, const std::string& version);

// The active daemon's lease, as it knows it: renewed every ttl/5, held until a ttl after the last
// renewal the database confirmed was sent (the database's expiry is later still: it counts from
// when the renewal ran). Lost when a renewal finds another epoch, or when none is confirmed in time.
class ActiveLease {
 public:
  ActiveLease(std::int64_t epoch, Millis ttl, MonoTime taken_at);

  std::int64_t epoch() const { return epoch_; }
  Millis renew_every() const { return ttl_ / 5; }
  // The database's answer to a renewal sent at `sent_at`: held, or a conflict saying who holds it.
  Result<void> renewed(MonoTime sent_at, const store::LeaseState& answer);
  // Whether the lease is still held at `now`: unavailable once no renewal was confirmed within the ttl.
  Result<void> still_held(MonoTime now) const;
  // Why the store looks unreachable at `now`: no renewal confirmed for more than two renewal periods
  // (one may be slow), as a sentence that says when the lease runs out; nullopt while they are.
  std::optional<std::string> store_problem(MonoTime now) const;

 private:
  std::int64_t epoch_;
  Millis ttl_;
  MonoTime held_until_;
};

// Logs `event=lease_lost` and ends the process at once, with status kLeaseLostExitStatus: nothing
// more is written, answered or launched (the supervisor restarts it, as a standby).
inline constexpr int kLeaseLostExitStatus = 3;
[[noreturn]] void exit_on_lease_lost(const std::string& reason);

struct StandbySetup {
  std::string host;
  unsigned short port = 0;  // a port of its own, not 0: the URL it advertises is known before it listens
  net::HttpServerOptions server;
  std::string advertise_url;  // empty: scheme://host:port as bound
  std::string holder;         // this process, unique among the daemons on the store
  Millis lease_ttl{5000};
  std::string version;
  // Called once the port is bound, with the URL it listens at (the daemon writes daemon.addr).
  std::function<void(const std::string& url)> on_listening;
};

struct Activation {
  unsigned short port = 0;  // the active daemon listens on it
  std::string advertise_url;
  store::LeaseState lease;  // held
  MonoTime sent_at{};       // when the request that took it was sent (ActiveLease counts from it)
};

// Serves `setup.port` as a standby until this process takes the lease of `store`, which nothing
// else uses meanwhile; then closes the port (for the active daemon to listen on) and returns.
// Returns at once, serving nothing, when the lease is free or the store has none (one daemon only).
Activation serve_as_standby_until_active(store::Store& store, const StandbySetup& setup);

// scheme://host:port, with an IPv6 host in brackets.
std::string listening_url(bool tls, const std::string& host, unsigned short port);

// This process among the daemons on one store: host name, process id and a random part.
std::string lease_holder_id();

}  // namespace trainyard::daemon
