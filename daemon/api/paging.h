#pragma once
// Cursor paging, the same on every list endpoint: `limit` and an opaque `cursor` in, `next` out
// (null on the last page).
//
// A cursor names the last item of the page it followed, and is bound by a checksum to its list and
// to the request's filters (every query parameter but `cursor` and `limit`, so a client may change
// the page size while it walks). A cursor that was edited, taken from another list, or sent with
// other filters is refused with a 400 naming `cursor`. The checksum is not keyed, on purpose: a
// cursor only says where to resume in a list whose filters and access checks apply again on every
// page, so a forged one shows nothing the caller could not list anyway, and cursors stay valid
// across a daemon restart.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/http_types.h"

namespace trainyard::daemon {

struct PageRequest {
  std::optional<std::size_t> limit;    // none: the whole list (only where callers read it whole)
  std::optional<std::string> after;    // the position the cursor names: the previous page's last item
};

// Reads `limit` (`default_limit` when absent; its range is the route's, held by the dispatcher) and
// `cursor` of a request to `list`; throws InvalidInput("cursor") for a bad cursor.
PageRequest page_request(const net::HttpRequest& req, std::string_view list, std::optional<std::size_t> default_limit);

// The cursor of the page after the one whose last item is at `position`.
std::string page_cursor(const net::HttpRequest& req, std::string_view list, std::string_view position);

// A cursor's position as a whole number (lists positioned by id or sequence number).
std::int64_t cursor_number(const std::string& position);

}  // namespace trainyard::daemon
