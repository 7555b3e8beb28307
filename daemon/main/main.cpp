#include <sys/resource.h>
#include <sys/stat.h>

#include <iostream>

#include <spdlog/spdlog.h>

#include "daemon/main/daemon.h"
#include "proto/errors.h"

namespace {

// The connection caps assume descriptors to hold them, and the soft limit a shell hands out (often
// 1,024 against a hard limit of 524,288) would run out long before --max-connections: take the hard
// limit, and say so when even that is short (the accept loop then backs off instead of serving).
void raise_descriptor_limit(std::int64_t max_connections) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0 || ::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  }
  constexpr rlim_t kOwnDescriptors = 64;  // the database, logs, listeners, the store's files
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < static_cast<rlim_t>(max_connections) + kOwnDescriptors) {
    spdlog::warn("event=descriptor_limit_low limit={} max_connections={} hint=\"raise LimitNOFILE or ulimit -n\"",
                 limit.rlim_cur, max_connections);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Tokens, the database (with job environments) and checkpoints are nobody else's to read.
  ::umask(077);
  trainyard::daemon::DaemonOptions options;
  try {
    if (!trainyard::daemon::parse_daemon_options(argc, argv, options)) return 0;
  } catch (const trainyard::InvalidInput& e) {
    std::cerr << "trainyard-daemon: " << e.what() << "\n(see trainyard-daemon --help)\n";
    return 2;
  }
  raise_descriptor_limit(static_cast<std::int64_t>(options.server.caps.total));
  try {
    return trainyard::daemon::run_daemon(options);
  } catch (const std::exception& e) {
    spdlog::critical("event=daemon_failed error=\"{}\"", e.what());
    return 1;
  }
}
