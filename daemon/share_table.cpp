#include "daemon/share_table.h"

namespace trainyard::daemon {

void ShareTable::restore(const store::ShareRecord& record) {
  if (record.created) settings_[record.name] = {record.weight, record.max_running_cores, record.storage_limit_mb};
  if (record.members) members_[record.name] = *record.members;
}

void ShareTable::set(const std::string& name, const scheduler::ShareSettings& settings,
                     std::optional<std::vector<std::string>> members) {
  settings_[name] = settings;
  if (members) {
    members_[name] = std::move(*members);
  } else {
    members_.erase(name);
  }
}

void ShareTable::erase(const std::string& name) {
  settings_.erase(name);
  members_.erase(name);
}

const std::vector<std::string>* ShareTable::members(const std::string& name) const {
  const auto it = members_.find(name);
  return it == members_.end() ? nullptr : &it->second;
}

std::optional<std::int64_t> ShareTable::storage_limit_mb(const std::string& name) const {
  const auto it = settings_.find(name);
  return it == settings_.end() ? std::nullopt : it->second.storage_limit_mb;
}

store::ShareRecord ShareTable::record(const std::string& name, double usage_core_s, TimePoint at) const {
  store::ShareRecord record;
  record.name = name;
  if (const auto settings = settings_.find(name); settings != settings_.end()) {
    record.weight = settings->second.weight;
    record.max_running_cores = settings->second.max_running_cores;
    record.storage_limit_mb = settings->second.storage_limit_mb;
    record.created = true;
  }
  if (const auto* listed = members(name)) record.members = *listed;
  record.usage_core_s = usage_core_s;
  record.usage_at = at;
  return record;
}

}  // namespace trainyard::daemon
