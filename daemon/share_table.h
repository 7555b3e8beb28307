#pragma once
// The shares admins created: each one's settings (weight, running-core cap, storage limit) and, for
// a share open to members only, who they are. Shares that only carry the usage of jobs submitted
// before shares had to be created are not in it. Pure: the job manager stores and schedules, this
// remembers and builds the records it stores.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/types.h"
#include "store/store.h"

namespace trainyard::daemon {

class ShareTable {
 public:
  // A stored share's record: an admin's share is remembered, a usage row is not.
  void restore(const store::ShareRecord& record);
  // Creates or changes an admin's share; `members` nullopt: open to every user.
  void set(const std::string& name, const scheduler::ShareSettings& settings,
           std::optional<std::vector<std::string>> members);
  void erase(const std::string& name);

  bool created(const std::string& name) const { return settings_.contains(name); }
  // Who may submit into the share; null when every user may (or the share is not in the table).
  const std::vector<std::string>* members(const std::string& name) const;
  std::optional<std::int64_t> storage_limit_mb(const std::string& name) const;

  // The record the store keeps of share `name`, with its decayed usage `usage_core_s` as of `at`:
  // the settings and members of an admin's share, the usage alone otherwise.
  store::ShareRecord record(const std::string& name, double usage_core_s, TimePoint at) const;

 private:
  std::map<std::string, scheduler::ShareSettings> settings_;
  std::map<std::string, std::vector<std::string>> members_;  // of the shares open to members only
};

}  // namespace trainyard::daemon
