#pragma once
// Small builders shared by the scheduler's policy and simulation tests.
#include <optional>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"

namespace trainyard::scheduler::fixtures {

// A fixed origin so tests read in seconds.
inline TimePoint at_s(std::int64_t s) { return from_unix_ms(1'800'000'000'000 + s * 1000); }

inline NodeInfo node(const std::string& name, int cores, const std::string& rack = "") {
  NodeInfo n{name, cores, {}, true};
  if (!rack.empty()) n.labels["rack"] = rack;
  return n;
}

struct JobArgs {
  std::string share = "default";
  int nodes = 1;
  std::optional<int> cores_per_node = 1;
  std::optional<std::int64_t> timeout_s = 3600;
  int priority = 0;
  std::int64_t submitted_s = 0;
};

inline PendingJob job(JobId id, const JobArgs& a) {
  PendingJob p;
  p.id = id;
  p.share = a.share;
  p.nodes = a.nodes;
  p.cores_per_node = a.cores_per_node;
  p.timeout_s = a.timeout_s;
  p.priority = a.priority;
  p.submitted_at = at_s(a.submitted_s);
  return p;
}

inline std::vector<JobId> started(const PassResult& pass) {
  std::vector<JobId> ids;
  for (const Start& s : pass.starts) ids.push_back(s.job);
  return ids;
}

inline std::vector<std::string> node_names(const Start& start) {
  std::vector<std::string> names;
  for (const NodeCores& nc : start.nodes) names.push_back(nc.node);
  return names;
}

inline const ShareRow& row(const std::vector<ShareRow>& rows, const std::string& name) {
  for (const ShareRow& r : rows) {
    if (r.name == name) return r;
  }
  throw std::out_of_range("no share " + name);
}

}  // namespace trainyard::scheduler::fixtures
