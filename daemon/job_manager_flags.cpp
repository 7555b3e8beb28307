#include "daemon/job_manager_flags.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <tuple>

#include "daemon/policy/fence_timing.h"
#include "daemon/policy/recovery.h"
#include "proto/json_reader.h"
#include "proto/messages.h"
#include "scheduler/config_flags.h"

namespace trainyard::daemon {
namespace {

using std::chrono::seconds;

FailureRules load_failure_rules(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw InvalidInput("--failure-rules", "cannot read " + file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return FailureRules::parse(parse_json_text(text)).followed_by(FailureRules::defaults());
  } catch (const InvalidInput& e) {
    throw InvalidInput("--failure-rules", file + ": " + e.what());
  }
}

void add_liveness_flags(FlagParser& flags, JobManagerSettings& s) {
  JobManagerConfig& c = s.config;
  flags.add_duration<Millis>("heartbeat-interval-ms", "how often agents heartbeat", &c.heartbeat_interval, 10,
                             3'600'000);
  flags.add_duration<Millis>("node-timeout-ms", "a node without heartbeat for this long is DOWN", &c.node_timeout, 50,
                             86'400'000);
  flags.add_int(
      "fence-ms",
      "an agent none of whose heartbeats this daemon acknowledged for this long stops its attempts, so that a node "
      "cut off from the daemon never runs them beside their replacements; must leave --node-timeout-ms >= it + "
      "--kill-grace-ms + a tenth of the node timeout (default: the longest that does); 0: agents never fence",
      0, 86'400'000, [&s] { return s.fence ? s.fence->count() : std::int64_t{-1}; },
      [&s](std::int64_t ms) { s.fence = Millis(ms); });
  flags.add_duration<Millis>("disconnect-grace-ms",
                             "a node whose agent connection closed and did not reopen within this is lost (its "
                             "attempts fail and resume elsewhere)",
                             &c.recovery.disconnect_grace, 0, 86'400'000);
  flags.add_int("kill-grace-ms", "SIGTERM to SIGKILL grace when stopping an attempt", &c.kill_grace_ms, 0, 3'600'000);
  flags.add_duration<Millis>("tick-ms", "period of liveness checks and scheduling passes", &c.tick, 10, 60'000);
}

void add_retry_flags(FlagParser& flags, JobManagerSettings& s) {
  JobManagerConfig& c = s.config;
  flags.add_int("warm-spares", "idle healthy nodes kept freshly tested, so a resume on them needs no pre-flight",
                &c.recovery.warm_spares, 0, 100'000);
  flags.add_duration<seconds>("warm-for-s",
                              "a node whose health check passed within this is warm: a resume does not pre-flight it",
                              &c.recovery.warm_for, 1, 86'400);
  flags.add_duration<Millis>("retry-backoff-ms", "base of the exponential backoff between attempts",
                             &c.retry_backoff_base, 0, 3'600'000);
  flags.add_string("failure-rules",
                   "JSON file of failure classification rules ({\"rules\": [...]}), checked before "
                   "the built-in ones",
                   &s.failure_rules_file);
  flags.add_int("max-infra-retries",
                "retries of a job after infrastructure failures (lost node, failed pre-flight, "
                "hung on a bad node) in a row without training progress; not counted against its retry.attempts",
                &c.max_infra_retries, 0, 1000);
  flags.add_string("master-ports",
                   "the ports MASTER_PORT is chosen from, FIRST-LAST: an attempt gets FIRST + its id modulo the "
                   "range's size (keep it out of the nodes' ephemeral range, /proc/sys/net/ipv4/ip_local_port_range)",
                   &s.master_ports);
  flags.add_string("job-network",
                   "an IPv4 network (for example 10.240.0.0/12) that no host of the cluster uses: each attempt of a "
                   "command job whose nodes can (GET /v1/nodes: job_network) runs in a network of its own with an "
                   "address from it per rank; its ranks reach each other and nothing else, and nothing else reaches "
                   "them (its MASTER_ADDR is rank 0's address). Empty: jobs share their nodes' network",
                   &s.job_network);
  flags.add_int("max-array-size", "tasks one job array may have; a larger array is refused with 400", &c.max_array_size,
                1, 1'000'000);
}

void add_health_flags(FlagParser& flags, JobManagerSettings& s) {
  JobManagerConfig& c = s.config;
  flags.add_duration<seconds>("health-interval-s",
                              "how often idle nodes are health-checked; 0 turns periodic checks off",
                              &c.periodic_check_interval, 0, 365LL * 24 * 3600);
  flags.add_duration<seconds>("health-first-check-s",
                              "periodic checks start this long after start, as soon as three or more idle nodes can be "
                              "compared in pairs (so a fresh cluster's health matrix fills), not a whole "
                              "--health-interval-s later; 0: not early",
                              &c.first_comparison_after, 0, 365LL * 24 * 3600);
  flags.add_int(
      "health-group-size",
      "nodes of one periodic check, at most: the fleet, in name order, is checked group by group over "
      "--health-interval-s, and pair tests of any check compare nodes within groups of this size",
      2, kMaxRanks, [&c] { return static_cast<std::int64_t>(c.health.group_size); },
      [&c](std::int64_t n) { c.health.group_size = static_cast<std::size_t>(n); });
  flags.add_percent("health-max-checking-pct",
                    "at most this percent of the idle nodes are under periodic checks at once (one group at least)",
                    &c.periodic_checking_share, 1, 100);
  flags.add_duration<Millis>("health-task-timeout-ms",
                             "a node that does not answer a health suite within this is UNHEALTHY",
                             &c.health.task_timeout, 100, 3'600'000);
  flags.add_percent("suspect-pct", "a node whose busbw is below this percent of the set's median is SUSPECT",
                    &c.health.policy.suspect_fraction, 1, 100);
  flags.add_percent("slow-gemm-pct",
                    "a core whose GEMM takes at least this percent of the median of its node's other "
                    "cores is SUSPECT, and so is a node whose median core takes that of the other nodes'",
                    &c.health.accelerator_policy.slow_ratio, 110, 10'000);
  flags.add_int("min-free-disk-mb",
                "a node whose work or checkpoint filesystem has less free space (MiB) is SUSPECT "
                "and takes no new jobs until space returns; 0: off",
                &c.disk_policy.min_free_mb, 0, kMaxStorageLimitMb);
  flags.add_int("min-free-disk-pct", "likewise, below this percent of the filesystem free; 0: off",
                &c.disk_policy.min_free_pct, 0, 99);
  flags.add_duration<seconds>("storage-grace-s",
                              "a running job that stays over its storage quota (checkpoints, logs "
                              "and work directory) this long is stopped as disk_full, its own failure",
                              &c.storage_grace, 1, 7 * 24 * 3600);
  flags.add_int(
      "health-collective-kib", "buffer size of each health-check collective", 1, 256 * 1024,
      [&c] { return static_cast<std::int64_t>(c.health.collective.elements * sizeof(float) / 1024); },
      [&c](std::int64_t kib) { c.health.collective.elements = static_cast<std::size_t>(kib) * 1024 / sizeof(float); });
  flags.add_duration<seconds>("canary-interval-s", "how often a canary training job runs in the system share; 0: never",
                              &c.canary_interval, 0, 365LL * 24 * 3600);
  flags.add_int("canary-nodes", "nodes of each canary job", &c.canary_nodes, 1, 1024);
}

}  // namespace

JobManagerSettings::JobManagerSettings() {
  config.periodic_check_interval = std::chrono::hours(1);
  config.first_comparison_after = std::chrono::minutes(1);
  config.canary_interval = std::chrono::hours(1);
}

void add_job_manager_flags(FlagParser& flags, JobManagerSettings& settings) {
  add_liveness_flags(flags, settings);
  add_retry_flags(flags, settings);
  add_health_flags(flags, settings);
  scheduler::add_preemption_flags(flags, settings.config.preemption);
}

std::pair<int, int> parse_master_ports(const std::string& text) {
  const auto dash = text.find('-');
  int first = 0, last = 0;
  const auto number = [](std::string_view part, int& out) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), out);
    return error == std::errc() && end == part.data() + part.size();
  };
  if (dash == std::string::npos || !number(std::string_view(text).substr(0, dash), first) ||
      !number(std::string_view(text).substr(dash + 1), last) || first < 1024 || last > 65535 || first > last) {
    throw InvalidInput("--master-ports", "must be FIRST-LAST, ports with 1024 <= FIRST <= LAST <= 65535, got \"" + text + "\"");
  }
  return {first, last};
}

Ipv4Network parse_job_network_pool(const std::string& text) {
  const Ipv4Network pool = parse_ipv4_network(text, "--job-network");
  if (pool.prefix < 8 || pool.prefix > 28) {
    throw InvalidInput("--job-network", "must hold 16 to 2^24 addresses (a prefix from /8 to /28), got \"" + text + "\"");
  }
  return pool;
}

JobManagerConfig resolve(const JobManagerSettings& settings) {
  JobManagerConfig config = settings.config;
  if (!settings.job_network.empty()) config.job_network = parse_job_network_pool(settings.job_network);
  std::tie(config.master_port_first, config.master_port_last) = parse_master_ports(settings.master_ports);
  const Millis kill_grace(config.kill_grace_ms);
  config.fence_after = fence_time({config.heartbeat_interval, config.node_timeout, kill_grace, settings.fence});
  config.recovery.stopped_within = stopped_within_after(kill_grace);
  if (!settings.failure_rules_file.empty()) config.failure_rules = load_failure_rules(settings.failure_rules_file);
  scheduler::validate(config.preemption);
  return config;
}

}  // namespace trainyard::daemon
