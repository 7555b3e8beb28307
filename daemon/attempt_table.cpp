#include "daemon/attempt_table.h"

#include <algorithm>
#include <utility>

namespace trainyard::daemon {

bool ActiveAttempt::all_exited() const {
  return std::all_of(ranks.begin(), ranks.end(), [](const RankState& r) { return r.exited; });
}

int ActiveAttempt::rank_of(const std::string& node) const {
  auto it = std::find(record.nodes.begin(), record.nodes.end(), node);
  return it == record.nodes.end() ? -1 : static_cast<int>(it - record.nodes.begin());
}

ActiveAttempt& AttemptTable::add(ActiveAttempt attempt) {
  const AttemptId id = attempt.record.id;
  current_[attempt.record.job_id] = id;
  return attempts_.insert_or_assign(id, std::move(attempt)).first->second;
}

ActiveAttempt* AttemptTable::find(AttemptId id) {
  auto it = attempts_.find(id);
  return it == attempts_.end() ? nullptr : &it->second;
}

const ActiveAttempt* AttemptTable::find(AttemptId id) const {
  auto it = attempts_.find(id);
  return it == attempts_.end() ? nullptr : &it->second;
}

ActiveAttempt* AttemptTable::current(JobId job) {
  const auto id = current_id(job);
  return id ? find(*id) : nullptr;
}

std::optional<AttemptId> AttemptTable::current_id(JobId job) const {
  auto it = current_.find(job);
  return it == current_.end() ? std::nullopt : std::optional<AttemptId>(it->second);
}

void AttemptTable::remove(AttemptId id) {
  auto it = attempts_.find(id);
  if (it == attempts_.end()) return;
  auto current = current_.find(it->second.record.job_id);
  if (current != current_.end() && current->second == id) current_.erase(current);
  attempts_.erase(it);
}

std::optional<AttemptTable::RankOn> AttemptTable::rank_on(AttemptId id, const std::string& node) {
  ActiveAttempt* attempt = find(id);
  const int rank = attempt ? attempt->rank_of(node) : -1;
  if (rank < 0) return std::nullopt;
  return RankOn{attempt, rank};
}

void AttemptTable::set_survivors(JobId job, std::vector<std::string> nodes) { survivors_[job] = std::move(nodes); }

const std::vector<std::string>* AttemptTable::survivors(JobId job) const {
  auto it = survivors_.find(job);
  return it == survivors_.end() ? nullptr : &it->second;
}

void AttemptTable::forget_survivors(JobId job) { survivors_.erase(job); }

std::set<std::string_view> AttemptTable::survivor_nodes() const {
  std::set<std::string_view> nodes;
  for (const auto& [job, names] : survivors_) nodes.insert(names.begin(), names.end());
  return nodes;
}

std::vector<JobId> AttemptTable::resuming_jobs() const {
  std::vector<JobId> jobs;
  for (const auto& [job, names] : survivors_) jobs.push_back(job);
  return jobs;
}

}  // namespace trainyard::daemon
