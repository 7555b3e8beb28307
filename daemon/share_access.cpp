#include "daemon/share_access.h"

#include <algorithm>

#include "daemon/canary.h"

namespace trainyard {

std::optional<ShareRefusal> submit_refusal(const Principal& who, const std::string& share, bool created,
                                           const std::vector<std::string>* members) {
  if (share == kCanaryShare) {
    return ShareRefusal{403, "share " + share + " is the daemon's own (its canaries); submit to another share"};
  }
  if (share == kDefaultShare) return std::nullopt;
  if (!created) {
    return ShareRefusal{400, "share " + share + " does not exist; an admin creates it with PUT /v1/shares/" + share};
  }
  if (who.may(Action::manage_shares) || !members || std::find(members->begin(), members->end(), who.user) != members->end()) {
    return std::nullopt;
  }
  return ShareRefusal{403, "user " + who.user + " is not a member of share " + share +
                               "; an admin adds members with PUT /v1/shares/" + share};
}

std::optional<ShareRefusal> put_refusal(const std::string& share, const std::optional<std::vector<std::string>>& members) {
  if (share == kCanaryShare) {
    return ShareRefusal{403, "share " + share + " is the daemon's own (its canaries) and cannot be changed"};
  }
  if (share == kDefaultShare && members) {
    return ShareRefusal{400, "the " + share + " share is open to every user; it takes no members"};
  }
  return std::nullopt;
}

}  // namespace trainyard
