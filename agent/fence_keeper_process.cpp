#include "agent/fence_keeper_process.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <spdlog/spdlog.h>

#include "agent/attempt_cgroup.h"
#include "agent/process_registry.h"
#include "agent/rank_channel.h"
#include "proto/errors.h"

namespace trainyard::agent {
namespace {

using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct KeeperPlace {
  std::string node;
  std::string processes_dir;
  std::string cgroup_root;
  std::string cgroup_name;
};

struct Deadline {
  SteadyClock::time_point at;
  std::chrono::milliseconds grace{0};
};

// Stops what the agent would have stopped: its recorded process groups, politely and then not, and
// then everything in its attempt cgroups, which also takes what left its process group.
void fence(const KeeperPlace& place, const Deadline& deadline) {
  spdlog::warn("event=fence_keeper_fencing node={} reason=\"the agent renewed no fence deadline: frozen or dead\" "
               "grace_ms={}",
               place.node, deadline.grace.count());
  const int groups = signal_recorded_groups(place.processes_dir, SIGTERM);
  const auto grace_end = SteadyClock::now() + deadline.grace;
  while (SteadyClock::now() < grace_end && signal_recorded_groups(place.processes_dir, 0) > 0) {
    std::this_thread::sleep_for(20ms);
  }
  const int killed = signal_recorded_groups(place.processes_dir, SIGKILL);
  const int cgroups = Cgroups::find(place.cgroup_root, place.cgroup_name).remove_leftovers();
  spdlog::warn("event=fence_keeper_fenced node={} process_groups={} killed_after_grace={} cgroups={}", place.node,
               groups, killed, cgroups);
}

KeeperPlace parse_place(const Json& body) {
  ObjectReader r(body, "start");
  KeeperPlace place{r.string("node", 1, 256), r.string("processes_dir", 1, 4096), r.string("cgroup_root", 1, 4096),
                    r.string("cgroup_name", 1, 4096)};
  r.finish();
  return place;
}

}  // namespace

int run_fence_keeper(int channel_fd) {
  // Not the agent's terminal's or its service's to stop with a signal meant for the agent: only the
  // channel (stand_down, or the agent's death with no deadline) ends it. SIGKILL still does.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  KeeperPlace place;
  try {
    place = parse_place(receive_start_message(channel_fd));
  } catch (const std::exception& e) {
    std::cerr << "trainyard-agent " << kFenceKeeperFlag << ": bad start message: " << e.what() << "\n";
    return 2;
  }
  std::optional<Deadline> deadline;
  bool agent_gone = false;
  for (;;) {
    if (agent_gone && !deadline) return 0;
    const auto now = SteadyClock::now();
    if (deadline && now >= deadline->at) {
      fence(place, *deadline);
      deadline.reset();
      continue;
    }
    const int timeout_ms =
        deadline ? static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(deadline->at - now).count()) : -1;
    pollfd readable{channel_fd, POLLIN, 0};
    if (::poll(&readable, 1, timeout_ms) <= 0) continue;
    try {
      auto message = receive_channel_message(channel_fd);
      if (!message) {
        // What is left of a dead agent's attempts nobody will report or stop: the daemon replaces
        // them, and a restarted agent would kill them first thing. Stop them now rather than let
        // them run on until then (or, should no agent come back, beside their replacements).
        agent_gone = true;
        spdlog::warn("event=fence_keeper_agent_gone node={} attempts_pending={}", place.node, deadline.has_value());
        if (deadline) deadline->at = std::min(deadline->at, SteadyClock::now());
      } else if (message->body.contains("deadline")) {
        ObjectReader r(message->body["deadline"], "deadline");
        const auto at = r.integer("at_steady_ms", 0, INT64_MAX);
        const auto grace = r.integer("grace_ms", 0, 3'600'000);
        r.finish();
        deadline = Deadline{SteadyClock::time_point(std::chrono::milliseconds(at)), std::chrono::milliseconds(grace)};
      } else if (message->body.contains("clear")) {
        deadline.reset();
      } else if (message->body.contains("stand_down")) {
        return 0;
      }
    } catch (const std::exception& e) {
      spdlog::warn("event=fence_keeper_message_refused node={} error=\"{}\"", place.node, e.what());
    }
  }
}

}  // namespace trainyard::agent
