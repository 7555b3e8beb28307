#pragma once
// Who may submit into which share. Admins create shares (PUT /v1/shares/{name}) and may name their
// members; the default share is open to every user without being created; `system` is the
// daemon's own: its canaries enter it from inside the daemon, never through the API.
#include <optional>
#include <string>
#include <vector>

#include "daemon/auth.h"

namespace trainyard {

inline constexpr const char* kDefaultShare = "default";

struct ShareRefusal {
  int status = 400;  // 400: no such share; 403: the share is not the caller's
  std::string message;
};

// Why `who` may not submit into `share`, nullopt when they may. `created`: an admin created it;
// `members`: who may submit into it (null: every user). Admins may use any share but `system`.
std::optional<ShareRefusal> submit_refusal(const Principal& who, const std::string& share, bool created,
                                           const std::vector<std::string>* members);

// Why an admin may not create or change `share` with these members, nullopt when they may.
std::optional<ShareRefusal> put_refusal(const std::string& share, const std::optional<std::vector<std::string>>& members);

}  // namespace trainyard
