#include "daemon/share_access.h"

#include <algorithm>

#include "daemon/canary.h"

namespace trainyard::daemon {

Result<void> check_submit_share(const Principal& who, const std::string& share, bool created,
                                const std::vector<std::string>* members) {
  if (share == kCanaryShare) {
    return Error::forbidden("share " + share + " is the daemon's own (its canaries); submit to another share", "share");
  }
  if (share == kDefaultShare) return {};
  if (!created) {
    return Error::invalid_input("share",
                                "share " + share + " does not exist; an admin creates it with PUT /v1/shares/" + share);
  }
  if (who.may(Action::manage_shares) || !members || std::find(members->begin(), members->end(), who.user) != members->end()) {
    return {};
  }
  return Error::forbidden("user " + who.user + " is not a member of share " + share +
                              "; an admin adds members with PUT /v1/shares/" + share,
                          "share");
}

Result<void> check_share_put(const std::string& share, const std::optional<std::vector<std::string>>& members) {
  if (share == kCanaryShare) {
    return Error::forbidden("share " + share + " is the daemon's own (its canaries) and cannot be changed", "name");
  }
  if (share == kDefaultShare && members) {
    return Error::invalid_input("members", "the " + share + " share is open to every user; it takes no members");
  }
  return {};
}

Result<void> check_share_delete(const std::string& share) {
  if (share == kCanaryShare) {
    return Error::forbidden("share " + share + " is the daemon's own (its canaries) and cannot be deleted", "name");
  }
  if (share == kDefaultShare) {
    return Error::forbidden("share " + share + " is where jobs go without a share and cannot be deleted", "name");
  }
  return {};
}

}  // namespace trainyard::daemon
