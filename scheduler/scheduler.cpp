#include "scheduler/scheduler.h"

#include <algorithm>
#include <cassert>

#include "proto/seconds.h"
#include "scheduler/fair_share.h"
#include "scheduler/state.h"

namespace trainyard::scheduler {
namespace detail {

int State::node_slot(const std::string& name) {
  if (auto it = node_index.find(name); it != node_index.end()) return it->second;
  nodes.push_back(NodeSlot{name});
  capacity.add_node(0, 0, false);
  group_of.push_back(-1);
  return node_index[name] = static_cast<int>(nodes.size()) - 1;
}

void State::upsert_node(const NodeInfo& info) {
  const int slot = node_slot(info.name);
  NodeSlot& node = nodes[slot];
  node.cores = std::max(info.cores, 0);
  node.memory_mb = std::max<std::int64_t>(info.memory_mb, 0);
  node.accepts = info.accepts_work;
  node.present = true;
  group_of[slot] = -1;
  if (auto label = info.labels.find(config.placement_label); label != info.labels.end()) {
    group_of[slot] = groups.try_emplace(label->second, static_cast<int>(groups.size())).first->second;
  }
  refresh_capacity(slot);
}

void State::remove_node(const std::string& name) {
  if (auto it = node_index.find(name); it != node_index.end()) {
    nodes[it->second].present = false;
    nodes[it->second].accepts = false;
    refresh_capacity(it->second);
  }
}

void State::refresh_capacity(int node) {
  const NodeSlot& slot = nodes[node];
  const int total = slot.present ? slot.cores : 0;
  capacity.set_node(node, total, std::clamp(total - slot.used, 0, total), slot.present && slot.accepts);
  capacity.set_memory(node, slot.memory_mb, std::max<std::int64_t>(slot.memory_mb - slot.used_memory_mb, 0));
}

int State::share_slot(const std::string& name) {
  if (auto it = share_index.find(name); it != share_index.end()) {
    shares[it->second].forgotten = false;
    return it->second;
  }
  shares.push_back(ShareState{name});
  return share_index[name] = static_cast<int>(shares.size()) - 1;
}

void State::settle(int share, TimePoint now) {
  ShareState& s = shares[share];
  if (now <= s.usage_at) return;
  s.usage = decayed_usage(s.usage, s.running_cores, now - s.usage_at, config.usage_half_life);
  s.usage_at = now;
}

std::vector<double> State::expected_usage(TimePoint now) const {
  std::vector<double> expected(shares.size(), 0.0);
  if (now < charges_from) {  // asked about a time before the last pass: charges that ran out since are gone
    for (const auto& [id, work] : running) {
      if (work.charged_until > now) expected[work.share] += work.cores * in_seconds(work.charged_until - now);
    }
    return expected;
  }
  std::vector<std::int64_t> cores(shares.size());
  std::vector<std::int64_t> core_ms(shares.size());
  for (std::size_t share = 0; share < shares.size(); ++share) {
    cores[share] = shares[share].charging_cores;
    core_ms[share] = shares[share].charging_core_ms;
  }
  for (auto it = charging.begin(); it != charging.end() && it->first <= now; ++it) {  // ran out since the last pass
    const RunningWork& work = running.at(it->second);
    cores[work.share] -= work.cores;
    core_ms[work.share] -= work.cores * (work.charged_until - charges_from).count();
  }
  const std::int64_t elapsed_ms = (now - charges_from).count();
  for (std::size_t share = 0; share < shares.size(); ++share) {
    expected[share] = static_cast<double>(core_ms[share] - cores[share] * elapsed_ms) / 1000.0;
  }
  return expected;
}

void State::expire_charges(TimePoint now) {
  if (now <= charges_from) return;
  while (!charging.empty() && charging.begin()->first <= now) {
    const RunningWork& work = running.at(charging.begin()->second);
    shares[work.share].charging_cores -= work.cores;
    shares[work.share].charging_core_ms -= work.cores * (work.charged_until - charges_from).count();
    charging.erase(charging.begin());
  }
  const std::int64_t elapsed_ms = (now - charges_from).count();
  for (ShareState& share : shares) share.charging_core_ms -= share.charging_cores * elapsed_ms;
  charges_from = now;
}

Millis State::horizon(std::optional<std::int64_t> timeout_s) const {
  if (!timeout_s) return config.default_horizon;
  return std::min<Millis>(std::chrono::seconds(*timeout_s), config.default_horizon);
}

TimePoint State::expected_end(TimePoint start, std::optional<std::int64_t> timeout_s) const {
  return start + (timeout_s ? Millis(std::chrono::seconds(*timeout_s)) : config.default_horizon);
}

void State::make_ready(QueuedJob& job) {
  job.ready = true;
  shares[job.share].ready.insert(job.key);
  ++ready_demand[job.shape.cores_per_node];
}

void State::unqueue(JobId id) {
  auto it = queued.find(id);
  if (it == queued.end()) return;
  QueuedJob& job = it->second;
  ShareState& share = shares[job.share];
  if (job.ready) {
    share.ready.erase(job.key);
    if (--ready_demand[job.shape.cores_per_node] == 0) ready_demand.erase(job.shape.cores_per_node);
  } else {
    --share.held;
    if (job.not_before) backoff.erase({*job.not_before, id});
    if (job.gated) arrays.at(*job.array).waiting.erase({job.key, id});
  }
  last.reasons.erase(id);
  queued.erase(it);
}

void State::hold_running(JobId id, int share, std::vector<std::pair<int, int>> held, std::int64_t memory_mb,
                         TimePoint start, std::optional<std::int64_t> timeout_s) {
  assert(!running.contains(id));
  RunningWork work{share, std::move(held), memory_mb};
  for (const auto& [node, cores] : work.nodes) {
    nodes[node].used += cores;
    nodes[node].used_memory_mb += memory_mb;
    refresh_capacity(node);
    work.cores += cores;
  }
  work.charged_until = start + horizon(timeout_s);
  work.expected_end = expected_end(start, timeout_s);
  shares[share].running_cores += work.cores;
  if (work.charged_until > charges_from) {
    charging.insert({work.charged_until, id});
    shares[share].charging_cores += work.cores;
    shares[share].charging_core_ms += work.cores * (work.charged_until - charges_from).count();
  }
  running_by_end.insert({work.expected_end, id});
  running.emplace(id, std::move(work));
}

void State::release_running(JobId id, TimePoint now) {
  auto it = running.find(id);
  if (it == running.end()) return;
  const RunningWork& work = it->second;
  settle(work.share, now);
  shares[work.share].running_cores -= work.cores;
  if (charging.erase({work.charged_until, id}) > 0) {
    shares[work.share].charging_cores -= work.cores;
    shares[work.share].charging_core_ms -= work.cores * (work.charged_until - charges_from).count();
  }
  for (const auto& [node, cores] : work.nodes) {
    nodes[node].used -= cores;
    nodes[node].used_memory_mb -= work.memory_mb;
    refresh_capacity(node);
  }
  running_by_end.erase({work.expected_end, id});
  running.erase(it);
}

}  // namespace detail

Scheduler::Scheduler(Config config) : state_(std::make_unique<detail::State>()) {
  validate(config);
  state_->config = std::move(config);
}

Scheduler::~Scheduler() = default;
Scheduler::Scheduler(Scheduler&&) noexcept = default;
Scheduler& Scheduler::operator=(Scheduler&&) noexcept = default;

const Config& Scheduler::config() const { return state_->config; }

void Scheduler::set_share(const std::string& name, const ShareSettings& settings) {
  validate(settings);
  state_->shares[state_->share_slot(name)].settings = settings;
}

bool Scheduler::forget_share(const std::string& name) {
  auto it = state_->share_index.find(name);
  if (it == state_->share_index.end()) return true;
  detail::ShareState& share = state_->shares[it->second];
  if (!share.ready.empty() || share.held > 0 || share.running_cores > 0 || share.charging_cores > 0) return false;
  share = detail::ShareState{name};
  share.forgotten = true;
  return true;
}

void Scheduler::upsert_node(const NodeInfo& info) { state_->upsert_node(info); }

void Scheduler::remove_node(const std::string& name) { state_->remove_node(name); }

void Scheduler::queue(const PendingJob& p) {
  detail::State& s = *state_;
  assert(p.nodes >= 1 && (!p.cores_per_node || *p.cores_per_node >= 1));
  assert(!s.running.contains(p.id));
  s.unqueue(p.id);
  detail::QueuedJob job;
  job.id = p.id;
  job.share = s.share_slot(p.share);
  job.key = detail::JobKey{-p.priority, to_unix_ms(p.submitted_at), p.id};
  job.shape = Shape{p.nodes, p.cores_per_node.value_or(0), p.memory_mb};
  job.timeout_s = p.timeout_s;
  job.waiting_for = p.waiting_for;
  job.not_before = p.not_before;
  job.dependency_reason = p.dependency_reason;
  if (p.array) {
    s.join_array(p.id, *p.array);
    job.array = p.array->array_job;
  }
  for (const std::string& name : p.excluded_nodes) job.excluded.push_back(s.node_slot(name));
  std::sort(job.excluded.begin(), job.excluded.end());
  job.excluded.erase(std::unique(job.excluded.begin(), job.excluded.end()), job.excluded.end());

  detail::QueuedJob& stored = s.queued.emplace(p.id, std::move(job)).first->second;
  if (stored.waiting_for.empty() && !stored.not_before) {
    s.admit(stored);
  } else {
    ++s.shares[stored.share].held;
    if (stored.not_before) s.backoff.insert({*stored.not_before, stored.id});
  }
}

void Scheduler::remove(JobId job) {
  state_->unqueue(job);
  if (!state_->running.contains(job)) state_->leave_array(job);
}

void Scheduler::start_running(const RunningJob& job, TimePoint now) {
  detail::State& s = *state_;
  s.unqueue(job.id);
  s.release_running(job.id, now);
  const int share = s.share_slot(job.share);
  s.settle(share, now);
  std::vector<std::pair<int, int>> held;
  for (const NodeCores& nc : job.nodes) held.emplace_back(s.node_slot(nc.node), nc.cores);
  s.hold_running(job.id, share, std::move(held), job.memory_mb, job.started_at, job.timeout_s);
  if (job.array) {
    s.join_array(job.id, *job.array);
    s.arrays.at(job.array->array_job).admitted.insert(job.id);
  }
}

void Scheduler::finish(JobId job, TimePoint now) {
  state_->release_running(job, now);
  state_->leave_array(job);
}

std::vector<UsageRecord> Scheduler::export_usage(TimePoint now) {
  std::vector<UsageRecord> records;
  for (int i = 0; i < static_cast<int>(state_->shares.size()); ++i) {
    if (state_->shares[i].forgotten) continue;
    state_->settle(i, now);
    records.push_back(UsageRecord{state_->shares[i].name, state_->shares[i].usage, state_->shares[i].usage_at});
  }
  return records;
}

void Scheduler::import_usage(const UsageRecord& record) {
  detail::ShareState& share = state_->shares[state_->share_slot(record.share)];
  share.usage = std::max(record.usage, 0.0);
  share.usage_at = record.at;
}

PassResult Scheduler::schedule(TimePoint now) { return detail::run_pass(*state_, now); }

std::optional<PendingReason> Scheduler::why_pending(JobId job) const {
  auto it = state_->queued.find(job);
  if (it == state_->queued.end()) return std::nullopt;
  return detail::explain(*state_, it->second);
}

std::optional<int> Scheduler::queue_position(JobId job) const {
  const detail::State& s = *state_;
  auto it = s.queued.find(job);
  if (it == s.queued.end() || !it->second.ready) return std::nullopt;
  const detail::ShareState& mine = s.shares[it->second.share];
  const auto ahead_of_mine = [&](const detail::ShareState& other) {
    const bool other_system = other.name == s.config.system_share;
    const bool mine_system = mine.name == s.config.system_share;
    if (other_system != mine_system) return other_system;
    return other.order_ratio != mine.order_ratio ? other.order_ratio < mine.order_ratio : &other < &mine;
  };
  std::size_t position = mine.ready.order_of_key(it->second.key) + 1;
  for (const detail::ShareState& other : s.shares) {
    if (&other != &mine && ahead_of_mine(other)) position += other.ready.size();
  }
  return static_cast<int>(position);
}

namespace {

// The shares in the order their ready jobs queue: the system share first, then by order ratio (as
// queue_position counts them).
std::vector<const detail::ShareState*> shares_in_queue_order(const detail::State& s) {
  std::vector<const detail::ShareState*> order;
  for (const detail::ShareState& share : s.shares) order.push_back(&share);
  std::sort(order.begin(), order.end(), [&](const detail::ShareState* a, const detail::ShareState* b) {
    const bool a_system = a->name == s.config.system_share;
    const bool b_system = b->name == s.config.system_share;
    if (a_system != b_system) return a_system;
    return a->order_ratio != b->order_ratio ? a->order_ratio < b->order_ratio : a < b;
  });
  return order;
}

}  // namespace

std::vector<JobId> Scheduler::queue_page(std::size_t offset, std::size_t limit) const {
  std::vector<JobId> page;
  for (const detail::ShareState* share : shares_in_queue_order(*state_)) {
    if (page.size() == limit) break;
    if (offset >= share->ready.size()) {
      offset -= share->ready.size();
      continue;
    }
    for (auto it = share->ready.find_by_order(offset); it != share->ready.end() && page.size() < limit; ++it) {
      page.push_back(it->id);
    }
    offset = 0;
  }
  return page;
}

std::size_t Scheduler::queue_length() const {
  std::size_t length = 0;
  for (const detail::ShareState& share : state_->shares) length += share.ready.size();
  return length;
}

std::vector<ShareRow> Scheduler::shares(TimePoint now) const {
  const detail::State& s = *state_;
  std::vector<ShareRow> rows;
  const std::vector<double> expected = s.expected_usage(now);
  double total = 0;
  double active_weight = 0;
  for (int i = 0; i < static_cast<int>(s.shares.size()); ++i) {
    const detail::ShareState& share = s.shares[i];
    if (share.forgotten) continue;
    ShareRow row;
    row.name = share.name;
    row.weight = share.settings.weight;
    row.max_running_cores = share.settings.max_running_cores;
    row.usage = now > share.usage_at ? decayed_usage(share.usage, share.running_cores, now - share.usage_at,
                                                     s.config.usage_half_life)
                                     : share.usage;
    row.expected_usage = expected[i];
    row.running_cores = share.running_cores;
    row.pending_jobs = static_cast<int>(share.ready.size()) + share.held;
    total += row.usage + row.expected_usage;
    if (row.pending_jobs > 0 || row.running_cores > 0) active_weight += row.weight;
    rows.push_back(std::move(row));
  }
  for (ShareRow& row : rows) {
    const double used = row.usage + row.expected_usage;
    row.normalized_usage = total > 0 ? used / total : 0;
    // An idle share is shown as if it were the only one joining the active ones.
    const bool active = row.pending_jobs > 0 || row.running_cores > 0;
    row.fair_share_factor = fair_share_factor(used, total, row.weight, active_weight + (active ? 0 : row.weight));
  }
  return rows;
}

bool Scheduler::is_pending(JobId job) const { return state_->queued.contains(job); }
bool Scheduler::is_running(JobId job) const { return state_->running.contains(job); }

}  // namespace trainyard::scheduler
