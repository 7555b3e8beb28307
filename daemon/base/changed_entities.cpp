#include "daemon/base/changed_entities.h"

#include <algorithm>

namespace trainyard::daemon {

std::vector<std::string> changed_entities(const store::Change& change) {
  std::vector<std::string> entities;
  const auto job = [&](JobId id) { entities.push_back("job/" + std::to_string(id)); };
  const auto webhook = [&](std::int64_t id) { entities.push_back("webhook/" + std::to_string(id)); };
  for (const Job& j : change.jobs) job(j.id);
  for (const Attempt& a : change.attempts) job(a.job_id);
  for (const Node& n : change.nodes) entities.push_back("node/" + n.name);
  for (const store::ShareRecord& s : change.shares) entities.push_back("share/" + s.name);
  for (const std::string& s : change.deleted_shares) entities.push_back("share/" + s);
  for (const store::WebhookRecord& w : change.webhooks) webhook(w.id);
  for (const store::WebhookDelivery& d : change.webhook_deliveries) webhook(d.webhook_id);
  for (const auto& [id, seq] : change.webhook_cursors) webhook(id);
  for (std::int64_t id : change.deleted_webhooks) webhook(id);
  for (const store::TokenRecord& t : change.tokens) entities.push_back("token/" + t.hash);
  for (const std::string& hash : change.revoked_tokens) entities.push_back("token/" + hash);
  std::sort(entities.begin(), entities.end());
  entities.erase(std::unique(entities.begin(), entities.end()), entities.end());
  return entities;
}

}  // namespace trainyard::daemon
