#include "daemon/cluster_history.h"

#include <algorithm>
#include <cmath>

namespace trainyard::daemon {
namespace {

// Whole events from the difference of two running totals (counters are doubles; counts are whole).
std::int64_t count_between(double now, double before) { return std::llround(std::max(0.0, now - before)); }

constexpr std::chrono::seconds kBucketSizes[] = {
    std::chrono::seconds(1),  std::chrono::seconds(5),  std::chrono::seconds(10),   std::chrono::seconds(30),
    std::chrono::minutes(1),  std::chrono::minutes(5),  std::chrono::minutes(10),   std::chrono::minutes(30),
    std::chrono::hours(1),    std::chrono::hours(6),    std::chrono::hours(24)};
constexpr std::int64_t kMaxBuckets = 300;

// One bucket's samples, summed as they are folded in.
struct Fold {
  TimePoint start{};
  int samples = 0;
  double total_cores = 0, usable_cores = 0, allocated_cores = 0, pending_jobs = 0, running_jobs = 0;
  int pending_jobs_max = 0;
  std::int64_t started_attempts = 0;
  std::map<std::string, std::int64_t> failed_attempts;
  double ended_core_s = 0, productive_core_s = 0;

  void add(const ClusterSample& s) {
    ++samples;
    total_cores += s.gauges.total_cores;
    usable_cores += s.gauges.usable_cores;
    allocated_cores += s.gauges.allocated_cores;
    pending_jobs += s.gauges.pending_jobs;
    running_jobs += s.gauges.running_jobs;
    pending_jobs_max = std::max(pending_jobs_max, s.gauges.pending_jobs);
    started_attempts += s.started_attempts;
    for (const auto& [cls, n] : s.failed_attempts) failed_attempts[cls] += n;
    ended_core_s += s.ended_core_s;
    productive_core_s += s.productive_core_s;
  }

  Json body(bool activity) const {
    const auto mean = [this](double sum) { return sum / samples; };
    Json j = {{"at", format_time(start)},
            {"samples", samples},
            {"total_cores", mean(total_cores)},
            {"usable_cores", mean(usable_cores)},
            {"allocated_cores", mean(allocated_cores)},
            {"pending_jobs", mean(pending_jobs)},
            {"pending_jobs_max", pending_jobs_max},
            {"running_jobs", mean(running_jobs)}};
    if (!activity) return j;
    j["started_attempts"] = started_attempts;
    j["failed_attempts"] = failed_attempts;
    j["ended_core_s"] = ended_core_s;
    j["productive_core_s"] = productive_core_s;
    j["goodput"] = ended_core_s > 0 ? Json(productive_core_s / ended_core_s) : Json(nullptr);
    return j;
  }
};

}  // namespace

ClusterGauges cluster_gauges(std::span<const NodeView> nodes, const std::map<JobId, Job>& active_jobs) {
  ClusterGauges g;
  for (const NodeView& view : nodes) {
    g.total_cores += view.node.cores;
    g.allocated_cores += view.node.cores - view.free_cores;
    if (view.node.connected && accepts_work(view.node.state)) g.usable_cores += view.node.cores;
  }
  for (const auto& [id, job] : active_jobs) {
    if (job.state == JobState::pending) ++g.pending_jobs;
    if (job.state == JobState::starting || job.state == JobState::running) ++g.running_jobs;
  }
  return g;
}

ClusterSample take_sample(TimePoint at, const ClusterGauges& gauges, const ActivityTotals& now,
                          const ActivityTotals& before) {
  ClusterSample s{.at = at, .gauges = gauges};
  s.started_attempts = count_between(now.started_attempts, before.started_attempts);
  for (const auto& [cls, total] : now.failed_attempts) {
    const auto was = before.failed_attempts.find(cls);
    const std::int64_t n = count_between(total, was == before.failed_attempts.end() ? 0 : was->second);
    if (n > 0) s.failed_attempts[cls] = n;
  }
  s.ended_core_s = std::max(0.0, now.ended_core_s - before.ended_core_s);
  s.productive_core_s = std::max(0.0, now.productive_core_s - before.productive_core_s);
  return s;
}

Json to_json(const ClusterSample& s) {
  return {{"total_cores", s.gauges.total_cores},
          {"usable_cores", s.gauges.usable_cores},
          {"allocated_cores", s.gauges.allocated_cores},
          {"pending_jobs", s.gauges.pending_jobs},
          {"running_jobs", s.gauges.running_jobs},
          {"started_attempts", s.started_attempts},
          {"failed_attempts", s.failed_attempts},
          {"ended_core_s", s.ended_core_s},
          {"productive_core_s", s.productive_core_s}};
}

std::optional<ClusterSample> cluster_sample_from_json(const Json& j) {
  try {
    ClusterSample s;
    s.gauges.total_cores = j.at("total_cores").get<int>();
    s.gauges.usable_cores = j.at("usable_cores").get<int>();
    s.gauges.allocated_cores = j.at("allocated_cores").get<int>();
    s.gauges.pending_jobs = j.at("pending_jobs").get<int>();
    s.gauges.running_jobs = j.at("running_jobs").get<int>();
    s.started_attempts = j.at("started_attempts").get<std::int64_t>();
    s.failed_attempts = j.at("failed_attempts").get<std::map<std::string, std::int64_t>>();
    s.ended_core_s = j.at("ended_core_s").get<double>();
    s.productive_core_s = j.at("productive_core_s").get<double>();
    return s;
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

std::chrono::seconds history_bucket(std::chrono::seconds window, std::chrono::seconds sample_interval) {
  for (const std::chrono::seconds size : kBucketSizes) {
    if (size >= sample_interval && window.count() <= size.count() * kMaxBuckets) return size;
  }
  return std::max(sample_interval, std::chrono::seconds((window.count() + kMaxBuckets - 1) / kMaxBuckets));
}

Json history_body(std::span<const ClusterSample> samples, TimePoint from, TimePoint to, std::chrono::seconds bucket,
                  std::chrono::seconds sample_interval, bool activity) {
  const std::int64_t width_ms = std::chrono::duration_cast<Millis>(bucket).count();
  Json buckets = Json::array();
  std::optional<Fold> open;
  for (const ClusterSample& s : samples) {
    if (s.at < from || s.at > to) continue;
    const std::int64_t ms = to_unix_ms(s.at);
    const TimePoint start = from_unix_ms(ms - ms % width_ms);
    if (open && open->start != start) {
      buckets.push_back(open->body(activity));
      open.reset();
    }
    if (!open) open = Fold{.start = start};
    open->add(s);
  }
  if (open) buckets.push_back(open->body(activity));
  return {{"window_s", std::chrono::duration_cast<std::chrono::seconds>(to - from).count()},
          {"bucket_s", bucket.count()},
          {"sample_interval_s", sample_interval.count()},
          {"from", format_time(from)},
          {"to", format_time(to)},
          {"activity", activity},
          {"buckets", std::move(buckets)}};
}

}  // namespace trainyard::daemon
