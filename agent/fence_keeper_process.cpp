#include "agent/fence_keeper_process.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "agent/attempt_cgroup.h"
#include "agent/process_registry.h"
#include "agent/rank_channel.h"
#include "agent/stop_report.h"
#include "proto/errors.h"

namespace trainyard::agent {
namespace {

using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How long the dead agent's attempts may take to be gone after SIGKILL: the kernel's teardown.
constexpr auto kGoneWithin = 2s;
// How long a dead agent's keeper keeps trying to reach a daemon: past the kill grace the active
// daemon no longer needs the report, but one that took over or restarted meanwhile still does.
constexpr auto kReportWithin = 30s;

struct KeeperPlace {
  std::string node;
  std::string processes_dir;
  std::string cgroup_root;
  std::string cgroup_name;
  StopReportTarget daemons;
};

// What the agent runs, as it last said.
struct Running {
  std::vector<AttemptId> attempts;
  std::chrono::milliseconds grace{0};
};

// Stops what the agent would have stopped: its recorded process groups, politely and then not, and
// then everything in its attempt cgroups, which also takes what left its process group.
void fence(const KeeperPlace& place, std::chrono::milliseconds grace, std::string_view why) {
  spdlog::warn("event=fence_keeper_fencing node={} reason=\"{}\" grace_ms={}", place.node, why, grace.count());
  const int groups = signal_recorded_groups(place.processes_dir, SIGTERM);
  const auto grace_end = SteadyClock::now() + grace;
  while (SteadyClock::now() < grace_end && running_in_recorded_groups(place.processes_dir) > 0) {
    std::this_thread::sleep_for(20ms);
  }
  const int killed = signal_recorded_groups(place.processes_dir, SIGKILL);
  const int cgroups = Cgroups::find(place.cgroup_root, place.cgroup_name).remove_leftovers();
  spdlog::warn("event=fence_keeper_fenced node={} process_groups={} killed_after_grace={} cgroups={}", place.node,
               groups, killed, cgroups);
}

// Whether nothing the agent started still runs: no attempt cgroup is left (the kernel removes one
// only once none of its processes runs); without cgroups, no process of a recorded group runs (what
// left its group is then out of reach, as it is of the agent's own kill).
bool attempts_gone(const KeeperPlace& place) {
  const Cgroups cgroups = Cgroups::find(place.cgroup_root, place.cgroup_name);
  if (cgroups.available()) return cgroups.attempt_cgroups_left() == 0;
  return running_in_recorded_groups(place.processes_dir) == 0;
}

bool wait_until_gone(const KeeperPlace& place) {
  const auto until = SteadyClock::now() + kGoneWithin;
  while (!attempts_gone(place)) {
    if (SteadyClock::now() >= until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// The agent died. What is left of its attempts nobody will report or stop: a restarted agent would
// kill them first thing, but one that never comes back would leave them running beside their
// replacements. So they are stopped now, and once they are surely gone the daemon is told, so that
// it replaces them at once rather than after the time this might have taken.
int outlive_the_agent(const KeeperPlace& place, const Running& running) {
  spdlog::warn("event=fence_keeper_agent_gone node={} attempts={}", place.node, fmt::join(running.attempts, ","));
  if (running.attempts.empty()) return 0;
  fence(place, running.grace, "the agent died");
  if (!wait_until_gone(place)) {
    spdlog::error("event=fence_keeper_stop_unconfirmed node={} attempts={} within_ms={} effect=\"not reported: the "
                  "daemon waits out the kill grace\"",
                  place.node, fmt::join(running.attempts, ","), std::chrono::milliseconds(kGoneWithin).count());
    return 1;
  }
  return report_attempts_stopped(place.daemons, place.node, running.attempts, kReportWithin) ? 0 : 1;
}

KeeperPlace parse_place(const Json& body) {
  ObjectReader r(body, "start");
  KeeperPlace place{r.string("node", 1, 256), r.string("processes_dir", 1, 4096), r.string("cgroup_root", 1, 4096),
                    r.string("cgroup_name", 1, 4096), {}};
  const Json* daemons = r.child("daemons");
  if (!daemons) throw InvalidInput(r.field_path("daemons"), "is required");
  ObjectReader d(*daemons, r.field_path("daemons"));
  place.daemons.servers = d.string_list("servers", 64, 4096);
  if (place.daemons.servers.empty()) throw InvalidInput(d.field_path("servers"), "must name a daemon");
  place.daemons.tls.ca_file = d.string("ca_file", 0, 4096);
  place.daemons.tls.cert_file = d.string("cert_file", 0, 4096);
  place.daemons.tls.key_file = d.string("key_file", 0, 4096);
  place.daemons.credential_file = d.string("credential_file", 1, 4096);
  d.finish();
  r.finish();
  return place;
}

Running parse_running(const Json& body) {
  ObjectReader r(body, "running");
  Running running;
  const Json* attempts = r.child("attempts");
  if (!attempts || !attempts->is_array()) throw InvalidInput(r.field_path("attempts"), "must be an array");
  for (const Json& id : *attempts) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 1) throw InvalidInput(r.field_path("attempts"), "must hold attempt ids");
    running.attempts.push_back(id.get<AttemptId>());
  }
  running.grace = std::chrono::milliseconds(r.integer("grace_ms", 0, 3'600'000));
  r.finish();
  return running;
}

SteadyClock::time_point parse_deadline(const Json& body) {
  ObjectReader r(body, "deadline");
  const auto at = r.integer("at_steady_ms", 0, INT64_MAX);
  r.finish();
  return SteadyClock::time_point(std::chrono::milliseconds(at));
}

}  // namespace

int run_fence_keeper(int channel_fd) {
  // Not the agent's terminal's or its service's to stop with a signal meant for the agent: only the
  // channel (stand_down, or the agent's death) ends it. SIGKILL still does.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  KeeperPlace place;
  try {
    place = parse_place(receive_start_message(channel_fd));
  } catch (const std::exception& e) {
    std::cerr << "trainyard-agent " << kFenceKeeperFlag << ": bad start message: " << e.what() << "\n";
    return 2;
  }
  Running running;
  std::optional<SteadyClock::time_point> deadline;
  for (;;) {
    const auto now = SteadyClock::now();
    if (deadline && now >= *deadline) {
      fence(place, running.grace, "the agent renewed no fence deadline: frozen or dead");
      deadline.reset();
      continue;
    }
    const int timeout_ms =
        deadline ? static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(*deadline - now).count()) : -1;
    pollfd readable{channel_fd, POLLIN, 0};
    if (::poll(&readable, 1, timeout_ms) <= 0) continue;
    try {
      auto message = receive_channel_message(channel_fd);
      if (!message) return outlive_the_agent(place, running);
      if (message->body.contains("running")) {
        running = parse_running(message->body["running"]);
      } else if (message->body.contains("deadline")) {
        deadline = parse_deadline(message->body["deadline"]);
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
