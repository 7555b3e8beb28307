#pragma once
// A Store that hands every call to another one: the base of test decorators that change only what
// they are about (a commit that fails, or waits on a gate) and pass the rest through.
#include "store/store.h"

namespace trainyard {

class ForwardingStore : public store::Store {
 public:
  explicit ForwardingStore(store::Store& inner) : inner_(inner) {}

  void commit(std::span<const store::Change> batch) override { inner_.commit(batch); }
  std::optional<bool> was_committed(const std::string& transaction) override { return inner_.was_committed(transaction); }
  store::LoadedState load() override { return inner_.load(); }
  std::optional<Job> job(JobId id) override { return inner_.job(id); }
  std::vector<Job> jobs(const store::JobQuery& query) override { return inner_.jobs(query); }
  std::vector<Attempt> attempts_of(JobId job) override { return inner_.attempts_of(job); }
  std::vector<Attempt> attempts_of_jobs(std::span<const JobId> jobs) override { return inner_.attempts_of_jobs(jobs); }
  std::vector<Attempt> attempts_running_since(TimePoint from, JobId before_job, int limit) override {
    return inner_.attempts_running_since(from, before_job, limit);
  }
  std::optional<Attempt> attempt(AttemptId id) override { return inner_.attempt(id); }
  std::optional<Node> node(const std::string& name) override { return inner_.node(name); }
  std::optional<store::TokenRecord> token_by_hash(const std::string& hash) override { return inner_.token_by_hash(hash); }
  std::vector<store::TokenRecord> tokens() override { return inner_.tokens(); }
  std::vector<MetricRecord> metrics_of(JobId job) override { return inner_.metrics_of(job); }
  std::vector<store::CheckpointRecord> checkpoints_of(JobId job) override { return inner_.checkpoints_of(job); }
  std::optional<store::HealthCheckRow> health_check(std::int64_t id) override { return inner_.health_check(id); }
  std::vector<store::HealthCheckRow> recent_health_checks(std::int64_t before_id, int limit) override {
    return inner_.recent_health_checks(before_id, limit);
  }
  std::vector<store::NodeHealthRow> node_health(const std::string& node, std::int64_t before_check_id, int limit) override {
    return inner_.node_health(node, before_check_id, limit);
  }
  std::vector<store::Event> events_after(std::int64_t seq, int limit) override { return inner_.events_after(seq, limit); }
  std::vector<store::Event> events_before(std::int64_t seq, int limit) override { return inner_.events_before(seq, limit); }
  std::int64_t prune_events(TimePoint older_than, std::int64_t keep_from_seq) override {
    return inner_.prune_events(older_than, keep_from_seq);
  }
  std::vector<store::Event> events_of_kind(const std::string& kind_prefix, std::int64_t seq, int limit) override {
    return inner_.events_of_kind(kind_prefix, seq, limit);
  }
  std::int64_t last_event_seq() override { return inner_.last_event_seq(); }
  std::vector<store::WebhookDelivery> webhook_deliveries(std::int64_t webhook_id, std::optional<std::int64_t> before_n,
                                                  int limit) override {
    return inner_.webhook_deliveries(webhook_id, before_n, limit);
  }
  std::vector<store::WebhookDelivery> open_webhook_deliveries(std::int64_t webhook_id) override {
    return inner_.open_webhook_deliveries(webhook_id);
  }
  std::optional<std::int64_t> webhooks_keep_from_seq() override { return inner_.webhooks_keep_from_seq(); }
  std::vector<store::ClusterSampleRow> cluster_samples_since(TimePoint from) override {
    return inner_.cluster_samples_since(from);
  }
  int schema_version() override { return inner_.schema_version(); }
  std::string cluster_name() override { return inner_.cluster_name(); }

 private:
  store::Store& inner_;
};

}  // namespace trainyard
