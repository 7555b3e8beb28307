#include "tests/support/in_memory_store.h"

#include <algorithm>
#include <tuple>

#include "store/schema.h"

namespace trainyard {
namespace {

template <class Map>
std::optional<typename Map::mapped_type> find_in(const Map& map, const typename Map::key_type& key) {
  auto it = map.find(key);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

}  // namespace

void InMemoryStore::commit(std::span<const store::Change> batch) {
  // All or nothing: write into a copy and keep it only if every change succeeded.
  Contents next = contents_;
  for (const store::Change& change : batch) write(next, change);
  contents_ = std::move(next);
}

void InMemoryStore::write(Contents& into, const store::Change& change) {
  for (const Job& j : change.jobs) into.jobs.insert_or_assign(j.id, j);
  for (const Attempt& a : change.attempts) {
    // SqliteStore's foreign key: an attempt belongs to a stored job.
    if (!into.jobs.contains(a.job_id)) {
      throw store::StoreError("attempt " + std::to_string(a.id) + " names job " + std::to_string(a.job_id) +
                       ", which is not stored");
    }
    into.attempts.insert_or_assign(a.id, a);
  }
  for (const Node& n : change.nodes) into.nodes.insert_or_assign(n.name, n);
  for (const store::TokenRecord& t : change.tokens) into.tokens.insert_or_assign(t.hash, t);
  for (const std::string& hash : change.revoked_tokens) into.tokens.erase(hash);
  for (const auto& [hash, at] : change.token_uses) {
    if (auto it = into.tokens.find(hash); it != into.tokens.end()) it->second.last_used_at = at;
  }
  for (const store::ShareRecord& s : change.shares) into.shares.insert_or_assign(s.name, s);
  for (const std::string& name : change.deleted_shares) into.shares.erase(name);
  for (store::Event e : change.events) {
    e.seq = ++into.last_seq;
    into.events.push_back(std::move(e));
  }
  for (const store::HealthCheckRow& h : change.health_checks) into.health_checks.insert_or_assign(h.id, h);
  for (const store::NodeHealthRow& h : change.node_health) into.node_health.insert_or_assign({h.node, h.check_id}, h);
  for (const store::ClusterSampleRow& c : change.cluster_samples) into.cluster_samples.insert_or_assign(c.at, c);
  if (change.cluster_samples_kept_from) {
    into.cluster_samples.erase(into.cluster_samples.begin(), into.cluster_samples.lower_bound(*change.cluster_samples_kept_from));
  }
  for (const MetricRecord& m : change.metrics) {
    if (!into.attempts.contains(m.attempt_id)) {
      throw store::StoreError("metrics name attempt " + std::to_string(m.attempt_id) + ", which is not stored");
    }
    into.metrics.insert_or_assign(std::tuple{m.job_id, m.metric.step, m.attempt_id}, m);
  }
  for (const store::CheckpointRecord& c : change.checkpoints) {
    if (!into.attempts.contains(c.attempt_id)) {
      throw store::StoreError("checkpoint names attempt " + std::to_string(c.attempt_id) + ", which is not stored");
    }
    into.checkpoints.insert_or_assign({c.job_id, c.step}, c);
  }
  for (const store::WebhookRecord& w : change.webhooks) {
    into.webhooks.insert_or_assign(w.id, w);
    into.max_webhook_id = std::max(into.max_webhook_id, w.id);
  }
  for (const store::WebhookDelivery& d : change.webhook_deliveries) {
    if (into.webhooks.contains(d.webhook_id)) into.deliveries.insert_or_assign({d.webhook_id, d.n}, d);
  }
  for (const auto& [id, seq] : change.webhook_cursors) {
    if (auto it = into.webhooks.find(id); it != into.webhooks.end()) it->second.cursor_seq = seq;
  }
  for (std::int64_t id : change.deleted_webhooks) {
    into.webhooks.erase(id);
    std::erase_if(into.deliveries, [id](const auto& entry) { return entry.first.first == id; });
  }
}

store::LoadedState InMemoryStore::load() {
  store::LoadedState state;
  for (const auto& [id, j] : contents_.jobs) {
    if (!is_terminal(j.state)) state.active_jobs.push_back(j);
  }
  for (const auto& [id, a] : contents_.attempts) {
    if (!is_terminal(a.state)) state.active_attempts.push_back(a);
  }
  for (const auto& [name, n] : contents_.nodes) state.nodes.push_back(n);
  for (const auto& [name, s] : contents_.shares) state.shares.push_back(s);
  state.max_job_id = contents_.jobs.empty() ? 0 : contents_.jobs.rbegin()->first;
  state.max_attempt_id = contents_.attempts.empty() ? 0 : contents_.attempts.rbegin()->first;
  state.max_health_check_id = contents_.health_checks.empty() ? 0 : contents_.health_checks.rbegin()->first;
  for (const auto& [id, w] : contents_.webhooks) state.webhooks.push_back(w);
  state.max_webhook_id = contents_.max_webhook_id;
  return state;
}

std::optional<Job> InMemoryStore::job(JobId id) { return find_in(contents_.jobs, id); }

std::vector<Job> InMemoryStore::jobs(const store::JobQuery& query) {
  std::vector<Job> out;
  for (auto it = contents_.jobs.rbegin(); it != contents_.jobs.rend() && std::ssize(out) < query.limit; ++it) {
    const Job& j = it->second;
    if (query.before_id && j.id >= *query.before_id) continue;
    if (query.after_id && j.id <= *query.after_id) continue;
    if (!query.states.empty() && std::ranges::find(query.states, j.state) == query.states.end()) continue;
    if (query.submitted_since && j.submitted_at < *query.submitted_since) continue;
    if (query.submitted_until && j.submitted_at >= *query.submitted_until) continue;
    if (query.share && j.spec.share != *query.share) continue;
    if (query.user && j.user != *query.user) continue;
    out.push_back(j);
  }
  return out;
}

std::optional<store::HealthCheckRow> InMemoryStore::health_check(std::int64_t id) { return find_in(contents_.health_checks, id); }

std::vector<store::HealthCheckRow> InMemoryStore::recent_health_checks(std::int64_t before_id, int limit) {
  std::vector<store::HealthCheckRow> out;
  for (auto it = std::make_reverse_iterator(contents_.health_checks.lower_bound(before_id));
       it != contents_.health_checks.rend() && std::ssize(out) < limit; ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::vector<store::NodeHealthRow> InMemoryStore::node_health(const std::string& node, std::int64_t before_check_id, int limit) {
  std::vector<store::NodeHealthRow> out;
  for (auto it = contents_.node_health.rbegin(); it != contents_.node_health.rend() && std::ssize(out) < limit; ++it) {
    if (it->first.first == node && it->first.second < before_check_id) out.push_back(it->second);
  }
  return out;
}

std::vector<MetricRecord> InMemoryStore::metrics_of(JobId job) {
  std::vector<MetricRecord> out;
  for (auto it = contents_.metrics.lower_bound({job, 0, 0}); it != contents_.metrics.end() && it->second.job_id == job; ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::vector<store::CheckpointRecord> InMemoryStore::checkpoints_of(JobId job) {
  std::vector<store::CheckpointRecord> out;
  for (auto it = contents_.checkpoints.lower_bound({job, 0}); it != contents_.checkpoints.end() && it->first.first == job; ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::vector<Attempt> InMemoryStore::attempts_of(JobId job) {
  std::vector<Attempt> out;
  for (const auto& [id, a] : contents_.attempts) {
    if (a.job_id == job) out.push_back(a);
  }
  return out;
}

std::vector<Attempt> InMemoryStore::attempts_of_jobs(std::span<const JobId> jobs) {
  std::vector<Attempt> out;
  for (const auto& [id, a] : contents_.attempts) {
    if (std::find(jobs.begin(), jobs.end(), a.job_id) != jobs.end()) out.push_back(a);
  }
  std::stable_sort(out.begin(), out.end(), [](const Attempt& a, const Attempt& b) { return a.job_id < b.job_id; });
  return out;
}

std::vector<Attempt> InMemoryStore::attempts_running_since(TimePoint from, JobId before_job, int limit) {
  std::vector<Attempt> out;
  for (const auto& [id, a] : contents_.attempts) {
    if (a.job_id < before_job && (!a.ended_at || *a.ended_at >= from)) out.push_back(a);
  }
  std::sort(out.begin(), out.end(),
            [](const Attempt& x, const Attempt& y) { return std::tie(x.job_id, x.id) > std::tie(y.job_id, y.id); });
  if (out.size() > static_cast<std::size_t>(std::max(limit, 0))) out.resize(static_cast<std::size_t>(std::max(limit, 0)));
  return out;
}

std::optional<Attempt> InMemoryStore::attempt(AttemptId id) { return find_in(contents_.attempts, id); }

std::optional<Node> InMemoryStore::node(const std::string& name) { return find_in(contents_.nodes, name); }

std::optional<store::TokenRecord> InMemoryStore::token_by_hash(const std::string& hash) {
  return find_in(contents_.tokens, hash);
}

std::vector<store::TokenRecord> InMemoryStore::tokens() {
  std::vector<store::TokenRecord> out;
  for (const auto& [hash, token] : contents_.tokens) out.push_back(token);
  std::sort(out.begin(), out.end(), [](const store::TokenRecord& a, const store::TokenRecord& b) {
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.hash < b.hash;
  });
  return out;
}

std::vector<store::Event> InMemoryStore::events_after(std::int64_t seq, int limit) {
  auto first = std::upper_bound(contents_.events.begin(), contents_.events.end(), seq,
                                [](std::int64_t s, const store::Event& e) { return s < e.seq; });
  const auto count = std::min<std::ptrdiff_t>(limit, contents_.events.end() - first);
  return std::vector<store::Event>(first, first + count);
}

std::vector<store::Event> InMemoryStore::events_before(std::int64_t seq, int limit) {
  std::vector<store::Event> out;
  for (auto e = contents_.events.rbegin(); e != contents_.events.rend() && static_cast<int>(out.size()) < limit; ++e) {
    if (e->seq < seq) out.push_back(*e);
  }
  return out;
}

std::vector<store::Event> InMemoryStore::events_of_kind(const std::string& kind_prefix, std::int64_t seq, int limit) {
  std::vector<store::Event> out;
  for (const store::Event& e : contents_.events) {
    if (static_cast<int>(out.size()) == limit) break;
    if (e.seq > seq && e.kind.starts_with(kind_prefix)) out.push_back(e);
  }
  return out;
}

std::int64_t InMemoryStore::prune_events(TimePoint older_than, std::int64_t keep_from_seq) {
  const auto before = contents_.events.size();
  std::erase_if(contents_.events, [&](const store::Event& e) { return e.at < older_than && e.seq < keep_from_seq; });
  const std::int64_t oldest_kept = contents_.events.empty() ? INT64_MAX : contents_.events.front().seq;
  std::map<std::int64_t, std::int64_t> newest_n;  // by webhook: its newest row is kept
  for (const auto& [key, d] : contents_.deliveries) newest_n[key.first] = key.second;
  std::erase_if(contents_.deliveries, [&](const auto& entry) {
    const auto& [key, d] = entry;
    const bool finished = d.state == store::DeliveryState::delivered || d.state == store::DeliveryState::dead;
    return finished && d.last_seq < oldest_kept && key.second < newest_n[key.first];
  });
  return static_cast<std::int64_t>(before - contents_.events.size());
}

std::vector<store::ClusterSampleRow> InMemoryStore::cluster_samples_since(TimePoint from) {
  std::vector<store::ClusterSampleRow> out;
  for (auto it = contents_.cluster_samples.lower_bound(from); it != contents_.cluster_samples.end(); ++it) {
    out.push_back(it->second);
  }
  return out;
}

int InMemoryStore::schema_version() { return store::latest_schema_version(); }

std::vector<store::WebhookDelivery> InMemoryStore::webhook_deliveries(std::int64_t webhook_id,
                                                               std::optional<std::int64_t> before_n, int limit) {
  std::vector<store::WebhookDelivery> out;
  for (auto it = contents_.deliveries.rbegin(); it != contents_.deliveries.rend() && static_cast<int>(out.size()) < limit; ++it) {
    if (it->first.first == webhook_id && (!before_n || it->first.second < *before_n)) out.push_back(it->second);
  }
  return out;
}

std::vector<store::WebhookDelivery> InMemoryStore::open_webhook_deliveries(std::int64_t webhook_id) {
  std::vector<store::WebhookDelivery> out;
  for (const auto& [key, d] : contents_.deliveries) {
    if (key.first == webhook_id && (d.state == store::DeliveryState::pending || d.state == store::DeliveryState::retrying)) out.push_back(d);
  }
  return out;
}

std::optional<std::int64_t> InMemoryStore::webhooks_keep_from_seq() {
  std::optional<std::int64_t> oldest;
  const auto keep = [&](std::int64_t seq) { oldest = oldest ? std::min(*oldest, seq) : seq; };
  for (const auto& [id, w] : contents_.webhooks) keep(w.cursor_seq + 1);
  for (const auto& [key, d] : contents_.deliveries) {
    if (d.state == store::DeliveryState::pending || d.state == store::DeliveryState::retrying) keep(d.first_seq);
  }
  return oldest;
}

}  // namespace trainyard
