#pragma once
// The cluster over days (GET /v1/cluster/history; docs/DESIGN.md "Cluster history"). Every
// --history-interval-s the daemon stores one sample of the whole cluster; the API answers a window
// of them folded into buckets for the overview's charts. A sample's gauges are read at its time;
// its activity (attempts started and failed, core-seconds of jobs that ended) is what happened
// since the sample before, taken as the difference of the daemon's Prometheus counters, so the
// charts and a Prometheus board agree. Pure: live state and counter totals in, samples and buckets out.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "daemon/nodes/node_registry.h"
#include "proto/job.h"

namespace trainyard::daemon {

// What the cluster holds at one moment.
struct ClusterGauges {
  int total_cores = 0;      // of every registered node
  int usable_cores = 0;     // of connected nodes that take work (HEALTHY): what "free" is counted from
  int allocated_cores = 0;  // held by attempts, on any node
  int pending_jobs = 0;
  int running_jobs = 0;     // STARTING or RUNNING
  bool operator==(const ClusterGauges&) const = default;
};

ClusterGauges cluster_gauges(std::span<const NodeView> nodes, const std::map<JobId, Job>& active_jobs);

// Running totals since the daemon started (DaemonMetrics::activity_totals).
struct ActivityTotals {
  double started_attempts = 0;
  std::map<std::string, double> failed_attempts;  // by failure class
  double ended_core_s = 0;  // measured core-seconds (goodput.h) of the jobs that ended
  double productive_core_s = 0;
};

struct ClusterSample {
  TimePoint at{};
  ClusterGauges gauges;
  std::int64_t started_attempts = 0;
  std::map<std::string, std::int64_t> failed_attempts;  // classes with none are left out
  double ended_core_s = 0;
  double productive_core_s = 0;
  bool operator==(const ClusterSample&) const = default;
};

// The sample at `at`: the totals `now` less `before` (the previous sample's, or zeros for the first
// after a start, since counters start at zero with the daemon).
ClusterSample take_sample(TimePoint at, const ClusterGauges& gauges, const ActivityTotals& now,
                          const ActivityTotals& before);

// A sample as stored (store::ClusterSampleRow::record).
Json to_json(const ClusterSample& s);
// nullopt when the record does not have a sample's shape (a damaged row): such rows are skipped.
std::optional<ClusterSample> cluster_sample_from_json(const Json& j);

// The bucket width for a window: the smallest of 1 s, 5 s, 10 s, 30 s, 1 min, 5 min, 10 min,
// 30 min, 1 h, 6 h and 1 d that cuts the window into at most 300 buckets and is no shorter than the
// sample interval (0: history is off; only the first rule applies).
std::chrono::seconds history_bucket(std::chrono::seconds window, std::chrono::seconds sample_interval);

// GET /v1/cluster/history's body: the samples in [from, to] folded into buckets that start at whole
// multiples of `bucket` (two reads a minute apart draw the same buckets), oldest first. Gauges are
// means over the bucket's samples (pending also as its max); activity is summed; goodput is
// productive over ended core-seconds, null when none ended. A bucket without samples (the daemon
// was down, or history off) is left out, so a chart shows a gap rather than a made-up line.
// Without `activity` the buckets hold the gauges only: attempts and goodput tell of other users' jobs.
Json history_body(std::span<const ClusterSample> samples, TimePoint from, TimePoint to, std::chrono::seconds bucket,
                  std::chrono::seconds sample_interval, bool activity);

}  // namespace trainyard::daemon
