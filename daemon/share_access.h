#pragma once
// Who may submit into which share. Admins create shares (PUT /v1/shares/{name}) and may name their
// members; the default share is open to every user without being created; `system` is the
// daemon's own: its canaries enter it from inside the daemon, never through the API.
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/auth.h"
#include "proto/result.h"

namespace trainyard::daemon {

inline constexpr const char* kDefaultShare = "default";

// Whether `who` may submit into `share`: invalid_input (field "share") when there is no such share,
// forbidden when it is not theirs. `created`: an admin created it;
// `members`: who may submit into it (null: every user). Admins may use any share but `system`.
Result<void> check_submit_share(const Principal& who, const std::string& share, bool created,
                                const std::vector<std::string>* members);

// Whether an admin may create or change `share` with these members: forbidden (field "name") for
// the daemon's own share, invalid_input (field "members") for members of the open one.
Result<void> check_share_put(const std::string& share, const std::optional<std::vector<std::string>>& members);

// Whether an admin may delete `share`: forbidden (field "name") for the daemon's own share and the
// default one, which every user submits into without it being created.
Result<void> check_share_delete(const std::string& share);

}  // namespace trainyard::daemon
