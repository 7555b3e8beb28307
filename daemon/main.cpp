#include <sys/stat.h>

#include <iostream>

#include <spdlog/spdlog.h>

#include "daemon/daemon.h"
#include "proto/errors.h"

int main(int argc, char** argv) {
  // Tokens, the database (with job environments) and checkpoints are nobody else's to read.
  ::umask(077);
  trainyard::DaemonOptions options;
  try {
    if (!trainyard::parse_daemon_options(argc, argv, options)) return 0;
  } catch (const trainyard::InvalidInput& e) {
    std::cerr << "trainyard-daemon: " << e.what() << "\n(see trainyard-daemon --help)\n";
    return 2;
  }
  try {
    return trainyard::run_daemon(options);
  } catch (const std::exception& e) {
    spdlog::critical("event=daemon_failed error=\"{}\"", e.what());
    return 1;
  }
}
