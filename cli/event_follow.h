#pragma once
// `trainyard events --follow`: reads GET /v1/events/stream and prints each event as it comes.
// After a lost connection (the daemon restarted, the network dropped, the stream went silent past
// the client's idle timeout) it reconnects with Last-Event-ID naming the last event printed, so
// nothing is missed or printed twice; waits between attempts grow from 1 s to 10 s. It ends only
// on Ctrl-C (the default SIGINT action), or when the daemon refuses the request (a 4xx: a bad
// filter, a revoked token), or when the very first connection cannot be made.
#include <string>

#include "cli/runner.h"

namespace trainyard::cli {

int follow_events(const ListEvents& command, const std::string& token, bool json, HttpClient& client,
                  const CliHost& host);

}  // namespace trainyard::cli
