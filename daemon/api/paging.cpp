#include "daemon/api/paging.h"

#include "daemon/api/query.h"
#include "daemon/base/auth.h"
#include "proto/errors.h"
#include "proto/flag_parser.h"

namespace trainyard::daemon {
namespace {

constexpr std::string_view kCursorVersion = "c1";
constexpr std::size_t kChecksumChars = 16;
constexpr std::size_t kMaxCursorChars = 1024;

std::string hex_of(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 0xf];
  }
  return out;
}

std::optional<std::string> bytes_of_hex(std::string_view hex) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]);
    const int low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high << 4 | low);
  }
  return out;
}

// What a cursor is bound to: its list, the request's filters and the position.
std::string checksum(const net::HttpRequest& req, std::string_view list, std::string_view position) {
  std::string bound = "trainyard-cursor\n";
  bound.append(list).append("\n");
  for (const auto& [name, value] : req.query) {
    if (name == "cursor" || name == "limit") continue;
    bound.append(name).append(1, '\0').append(value).append(1, '\0');
  }
  bound.append("\n").append(position);
  return sha256_hex(bound).substr(0, kChecksumChars);
}

InvalidInput bad_cursor() {
  return InvalidInput("cursor",
                      "is not a cursor this list gave with these filters (altered, from another list, or sent with "
                      "other filters); start again without a cursor");
}

}  // namespace

std::string page_cursor(const net::HttpRequest& req, std::string_view list, std::string_view position) {
  return std::string(kCursorVersion) + "." + hex_of(position) + "." + checksum(req, list, position);
}

PageRequest page_request(const net::HttpRequest& req, std::string_view list, std::optional<std::size_t> default_limit) {
  PageRequest page;
  page.limit = default_limit;
  if (auto limit = query_int(req, "limit")) {
    page.limit = static_cast<std::size_t>(*limit);
  }
  const auto it = req.query.find("cursor");
  if (it == req.query.end()) return page;
  const std::string_view cursor = it->second;
  const std::size_t first_dot = cursor.find('.');
  const std::size_t last_dot = cursor.rfind('.');
  if (cursor.size() > kMaxCursorChars || first_dot == std::string_view::npos || first_dot == last_dot ||
      cursor.substr(0, first_dot) != kCursorVersion) {
    throw bad_cursor();
  }
  const auto position = bytes_of_hex(cursor.substr(first_dot + 1, last_dot - first_dot - 1));
  if (!position || cursor.substr(last_dot + 1) != checksum(req, list, *position)) throw bad_cursor();
  page.after = *position;
  return page;
}

std::int64_t cursor_number(const std::string& position) { return parse_integer("cursor", position, 0, INT64_MAX); }

}  // namespace trainyard::daemon
