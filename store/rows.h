#pragma once
// Reading the store's rows back into records, for both backends: each reader takes a row that
// offers int_at, real_at, text_at and is_null_at by 0-based column (sqlite::Statement::Use,
// pg::Row), so the column lists and their decoding are written once. Record columns come first in
// every SELECT.
#include <limits>
#include <string>
#include <string_view>

#include "proto/text.h"
#include "store/store.h"

namespace trainyard::store::rows {

// The record of `change.jobs[i]`: rendered already, or rendered now into `scratch`.
inline const std::string& job_record_of(const Change& change, std::size_t i, std::string& scratch) {
  if (i < change.job_records.size()) return change.job_records[i];
  scratch = job_record(change.jobs[i]);
  return scratch;
}

template <class Decode>
auto decode(std::string_view table, const std::string& text, Decode&& from_json) {
  try {
    return from_json(Json::parse(text));
  } catch (const std::exception& e) {
    throw StoreError(std::string(table) + ": unreadable stored record: " + e.what());
  }
}

// Readers of one result row; record columns come first in every SELECT.
inline constexpr auto job_at = [](const auto& row) -> Job { return decode("jobs", row.text_at(0), job_from_json); };
inline constexpr auto attempt_at = [](const auto& row) -> Attempt { return decode("attempts", row.text_at(0), attempt_from_json); };
inline constexpr auto node_at = [](const auto& row) -> Node { return decode("nodes", row.text_at(0), node_from_json); };

constexpr std::string_view kTokenColumns = "hash, \"user\", role, created_at_ms, id, expires_at_ms, last_used_at_ms";
constexpr std::string_view kEventColumns = "seq, at_ms, kind, job_id, attempt_id, node, message, severity, \"user\", share, details";

inline constexpr auto token_at = [](const auto& row) -> TokenRecord {
  const auto role = parse_role(row.text_at(2));
  if (!role) throw StoreError("tokens: unreadable stored role \"" + row.text_at(2) + "\"");
  TokenRecord t{row.text_at(0), row.text_at(1), *role, from_unix_ms(row.int_at(3)), row.text_at(4)};
  if (!row.is_null_at(5)) t.expires_at = from_unix_ms(row.int_at(5));
  if (!row.is_null_at(6)) t.last_used_at = from_unix_ms(row.int_at(6));
  return t;
};

inline constexpr auto share_at = [](const auto& row) -> ShareRecord {
  ShareRecord s;
  s.name = row.text_at(0);
  s.weight = row.real_at(1);
  if (!row.is_null_at(2)) s.max_running_cores = static_cast<int>(row.int_at(2));
  s.usage_core_s = row.real_at(3);
  s.usage_at = from_unix_ms(row.int_at(4));
  s.created = row.int_at(5) != 0;
  if (!row.is_null_at(6)) {
    s.members = decode("shares", row.text_at(6), [](const Json& j) { return j.get<std::vector<std::string>>(); });
  }
  if (!row.is_null_at(7)) s.storage_limit_mb = row.int_at(7);
  return s;
};

inline constexpr auto event_at = [](const auto& row) -> Event {
  Event e;
  e.seq = row.int_at(0);
  e.at = from_unix_ms(row.int_at(1));
  e.kind = row.text_at(2);
  if (!row.is_null_at(3)) e.job_id = row.int_at(3);
  if (!row.is_null_at(4)) e.attempt_id = row.int_at(4);
  e.node = row.text_at(5);
  e.message = row.text_at(6);
  e.severity = parse_severity(row.text_at(7)).value_or(Severity::info);
  e.user = row.text_at(8);
  e.share = row.text_at(9);
  e.details = decode("events", row.text_at(10), [](const Json& j) { return j; });
  return e;
};

inline constexpr auto checkpoint_at = [](const auto& row) -> CheckpointRecord {
  CheckpointRecord c;
  c.job_id = row.int_at(0);
  c.step = row.int_at(1);
  c.attempt_id = row.int_at(2);
  c.manifest_sha256 = row.text_at(3);
  c.recorded_at = from_unix_ms(row.int_at(4));
  return c;
};

constexpr std::string_view kWebhookColumns =
    "id, owner, created_at_ms, url, events, format, filter, secret, cursor_seq, restricted";
constexpr std::string_view kDeliveryColumns =
    "webhook_id, n, first_seq, last_seq, state, attempts, first_attempt_at_ms, next_attempt_at_ms, log";

template <class Row>
Json json_at(std::string_view table, const Row& row, int column) {
  return decode(table, row.text_at(column), [](const Json& j) { return j; });
}

inline constexpr auto webhook_at = [](const auto& row) -> WebhookRecord {
  WebhookRecord w;
  w.id = row.int_at(0);
  w.owner = row.text_at(1);
  w.created_at = from_unix_ms(row.int_at(2));
  w.url = row.text_at(3);
  w.events = decode("webhooks", row.text_at(4), [](const Json& j) { return j.get<std::vector<std::string>>(); });
  w.format = row.text_at(5);
  w.filter = json_at("webhooks", row, 6);
  w.secret = row.text_at(7);
  w.cursor_seq = row.int_at(8);
  w.restricted = row.int_at(9) != 0;
  return w;
};

inline constexpr auto delivery_at = [](const auto& row) -> WebhookDelivery {
  WebhookDelivery d;
  d.webhook_id = row.int_at(0);
  d.n = row.int_at(1);
  d.first_seq = row.int_at(2);
  d.last_seq = row.int_at(3);
  const auto state = parse_delivery_state(row.text_at(4));
  if (!state) throw StoreError("webhook_deliveries: unreadable stored state \"" + row.text_at(4) + "\"");
  d.state = *state;
  d.attempts = static_cast<int>(row.int_at(5));
  d.first_attempt_at = from_unix_ms(row.int_at(6));
  if (!row.is_null_at(7)) d.next_attempt_at = from_unix_ms(row.int_at(7));
  d.log = json_at("webhook_deliveries", row, 8);
  return d;
};

template <class Row>
double real_or_nan(const Row& row, int column) {
  return row.is_null_at(column) ? std::numeric_limits<double>::quiet_NaN() : row.real_at(column);
}

inline constexpr auto metric_at = [](const auto& row) -> MetricRecord {
  MetricRecord r;
  r.job_id = row.int_at(0);
  r.attempt_id = row.int_at(1);
  r.metric.step = row.int_at(2);
  r.metric.loss = real_or_nan(row, 3);
  r.metric.grad_norm = real_or_nan(row, 4);
  r.metric.param_norm = real_or_nan(row, 5);
  r.metric.lr = real_or_nan(row, 6);
  r.metric.samples_per_s = real_or_nan(row, 7);
  r.metric.spike = row.int_at(8) != 0;
  if (!row.is_null_at(9)) r.metric.spike_steps_to_return = row.int_at(9);
  return r;
};

inline constexpr auto health_check_at = [](const auto& row) -> HealthCheckRow {
  return HealthCheckRow{row.int_at(0), row.text_at(1), from_unix_ms(row.int_at(2)),
                        decode("health_checks", row.text_at(3), [](const Json& j) { return j; })};
};

inline constexpr auto cluster_sample_at = [](const auto& row) -> ClusterSampleRow {
  return ClusterSampleRow{from_unix_ms(row.int_at(0)), decode("cluster_samples", row.text_at(1), [](const Json& j) { return j; })};
};

inline constexpr auto node_health_at = [](const auto& row) -> NodeHealthRow {
  return NodeHealthRow{row.text_at(0), row.int_at(1), from_unix_ms(row.int_at(2)), row.text_at(3),
                       decode("node_health", row.text_at(4), [](const Json& j) { return j; })};
};

}  // namespace trainyard::store::rows
