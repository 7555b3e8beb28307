#pragma once
// A Store kept in memory, for tests of code that uses a Store: the fake beside the interface (docs/STYLE.md
// "Interface, implementation, fake"). It passes the same conformance suite as SqliteStore (tests/unit/store), including
// all-or-nothing batches and the rule that an attempt's job must exist; nothing is durable.
//
// Threading: one thread at a time, like every Store.
#include <map>
#include <tuple>

#include "store/store.h"

namespace trainyard {

class InMemoryStore final : public store::Store {
 public:
  void commit(std::span<const store::Change> batch) override;
  store::LoadedState load() override;

  std::optional<Job> job(JobId id) override;
  std::vector<Job> jobs(const store::JobQuery& query) override;
  std::vector<Attempt> attempts_of(JobId job) override;
  std::vector<Attempt> attempts_of_jobs(std::span<const JobId> jobs) override;
  std::vector<Attempt> attempts_running_since(TimePoint from, JobId before_job, int limit) override;
  std::optional<Attempt> attempt(AttemptId id) override;
  std::optional<Node> node(const std::string& name) override;
  std::optional<store::TokenRecord> token_by_hash(const std::string& hash) override;
  std::vector<store::TokenRecord> tokens() override;
  std::vector<MetricRecord> metrics_of(JobId job) override;
  std::vector<store::CheckpointRecord> checkpoints_of(JobId job) override;
  std::optional<store::HealthCheckRow> health_check(std::int64_t id) override;
  std::vector<store::HealthCheckRow> recent_health_checks(std::int64_t before_id, int limit) override;
  std::vector<store::NodeHealthRow> node_health(const std::string& node, std::int64_t before_check_id, int limit) override;
  std::vector<store::Event> events_after(std::int64_t seq, int limit) override;
  std::vector<store::Event> events_before(std::int64_t seq, int limit) override;
  std::vector<store::Event> events_of_kind(const std::string& kind_prefix, std::int64_t seq, int limit) override;
  std::int64_t prune_events(TimePoint older_than, std::int64_t keep_from_seq) override;
  std::int64_t last_event_seq() override { return contents_.last_seq; }
  std::vector<store::WebhookDelivery> webhook_deliveries(std::int64_t webhook_id, std::optional<std::int64_t> before_n,
                                                  int limit) override;
  std::vector<store::WebhookDelivery> open_webhook_deliveries(std::int64_t webhook_id) override;
  std::optional<std::int64_t> webhooks_keep_from_seq() override;
  std::vector<store::ClusterSampleRow> cluster_samples_since(TimePoint from) override;
  int schema_version() override;
  // The name of a database that held jobs before names were made: the layout unit tests know.
  std::string cluster_name() override { return ""; }

 private:
  struct Contents {
    std::map<JobId, Job> jobs;
    std::map<AttemptId, Attempt> attempts;
    std::map<std::string, Node> nodes;
    std::map<std::string, store::TokenRecord> tokens;
    std::map<std::string, store::ShareRecord> shares;
    std::vector<store::Event> events;  // in seq order
    std::map<std::tuple<JobId, std::int64_t, AttemptId>, MetricRecord> metrics;  // by (job, step, attempt)
    std::map<std::pair<JobId, std::int64_t>, store::CheckpointRecord> checkpoints;  // by (job, step)
    std::map<std::int64_t, store::HealthCheckRow> health_checks;
    std::map<std::pair<std::string, std::int64_t>, store::NodeHealthRow> node_health;  // by (node, check)
    std::map<std::int64_t, store::WebhookRecord> webhooks;
    std::map<std::pair<std::int64_t, std::int64_t>, store::WebhookDelivery> deliveries;  // by (webhook, n)
    std::map<TimePoint, store::ClusterSampleRow> cluster_samples;
    std::int64_t max_webhook_id = 0;
    std::int64_t last_seq = 0;
  };

  static void write(Contents& into, const store::Change& change);

  Contents contents_;
};

}  // namespace trainyard
