#include "net/server_list.h"

#include <algorithm>
#include <cassert>
#include <cctype>

#include "net/url.h"
#include "proto/errors.h"

namespace trainyard::net {
namespace {

// How refused_upgrade_reason writes a Retry-After, which retry_after_of_link_close reads back.
constexpr std::string_view kRetryAfter = " (retry after ";

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// Scheme, host and port, comparable; nullopt for what is not a URL. A list entry may leave out
// the scheme (the CLI's form), which means http.
std::optional<std::string> origin_of(const std::string& text) {
  const proto::Result<Url> url = read_url(text.find("://") == std::string::npos ? "http://" + text : text, "url");
  if (!url) return std::nullopt;
  return url->scheme + "://" + url->host + ":" + std::to_string(url->port);
}

std::string reason_of(const TryOutcome& outcome) {
  switch (outcome.kind) {
    case TryOutcome::Kind::standby: return "a standby that knows no active daemon yet: HTTP 503";
    case TryOutcome::Kind::unreachable: return outcome.detail;
    case TryOutcome::Kind::redirected:
    case TryOutcome::Kind::answered: break;
  }
  return "";
}

}  // namespace

std::vector<std::string> split_server_list(const std::string& text, const std::string& field) {
  std::vector<std::string> servers;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    std::string url = trimmed(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (url.empty()) throw InvalidInput(field, "has an empty URL in \"" + text + "\" (give URL1,URL2,...)");
    if (std::find(servers.begin(), servers.end(), url) != servers.end()) {
      throw InvalidInput(field, "names " + url + " twice");
    }
    servers.push_back(std::move(url));
    if (comma == std::string::npos) return servers;
    start = comma + 1;
  }
}

TryOutcome outcome_of_status(int status, const std::string& location) {
  if (status == 307 && !location.empty()) return {TryOutcome::Kind::redirected, location, ""};
  if (status == 503 || status == 307) return {TryOutcome::Kind::standby, "", ""};
  return {};
}

std::string refused_upgrade_reason(int status, const std::string& location, const std::string& body,
                                   const std::string& retry_after) {
  const bool seconds = !retry_after.empty() && retry_after.size() <= 9 &&
                       std::all_of(retry_after.begin(), retry_after.end(), [](char c) { return c >= '0' && c <= '9'; });
  return "HTTP " + std::to_string(status) + (location.empty() ? "" : " to " + location) +
         (seconds ? std::string(kRetryAfter) + retry_after + " s)" : "") + ": " + body;
}

std::optional<std::chrono::seconds> retry_after_of_link_close(const std::string& reason) {
  if (!reason.starts_with("HTTP ")) return std::nullopt;
  const std::size_t at = reason.find(kRetryAfter);
  if (at == std::string::npos || at > reason.find(": ")) return std::nullopt;
  const std::size_t digits = at + kRetryAfter.size();
  const std::size_t end = reason.find(" s)", digits);
  if (end == std::string::npos || end == digits || end - digits > 9) return std::nullopt;
  long long value = 0;
  for (std::size_t i = digits; i < end; ++i) {
    if (reason[i] < '0' || reason[i] > '9') return std::nullopt;
    value = value * 10 + (reason[i] - '0');
  }
  return std::min(std::chrono::seconds(value), kMaxRetryAfter);
}

TryOutcome outcome_of_link_close(const std::string& reason) {
  constexpr std::string_view kRedirect = "HTTP 307 to ";
  if (reason.starts_with(kRedirect)) {
    const std::string rest = reason.substr(kRedirect.size());
    return {TryOutcome::Kind::redirected, rest.substr(0, rest.find(": ")), ""};
  }
  if (reason.starts_with("HTTP 503") || reason.starts_with("HTTP 307")) return {TryOutcome::Kind::standby, "", ""};
  return {TryOutcome::Kind::unreachable, "", reason};
}

std::optional<std::size_t> server_of(const std::vector<std::string>& servers, const std::string& location) {
  const auto target = origin_of(location);
  if (!target) return std::nullopt;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    if (origin_of(servers[i]) == target) return i;
  }
  return std::nullopt;
}

Failover::Failover(std::vector<std::string> servers) : servers_(std::move(servers)) { assert(!servers_.empty()); }

FailoverStep Failover::failed(const TryOutcome& outcome) {
  assert(outcome.kind != TryOutcome::Kind::answered);
  const std::string from = current();
  if (outcome.kind == TryOutcome::Kind::redirected) {
    const auto target = server_of(servers_, outcome.location);
    std::string refusal;
    if (!target) {
      refusal = "the daemon at " + from + " is a standby; the active one is " + outcome.location +
                "; add it to --server (a credential is only sent to the URLs listed there)";
    } else if (redirects_ == kMaxRedirects) {
      refusal = "more than " + std::to_string(kMaxRedirects) + " redirects among the daemons of --server, the last from " +
                from + " to " + outcome.location;
    }
    if (refusal.empty()) {
      ++redirects_;
      current_ = *target;
      return {FailoverStep::Kind::try_next, ""};
    }
    current_ = (current_ + 1) % servers_.size();
    begin_round();
    return {FailoverStep::Kind::refused, refusal};
  }
  tried_.push_back(from + " (" + reason_of(outcome) + ")");
  current_ = (current_ + 1) % servers_.size();
  if (tried_.size() < servers_.size()) return {FailoverStep::Kind::try_next, ""};
  const std::string message = "no active daemon answered; tried " + tried_list();
  begin_round();
  return {FailoverStep::Kind::exhausted, message};
}

void Failover::begin_round() {
  tried_.clear();
  redirects_ = 0;
}

std::string Failover::tried_list() const {
  std::string out;
  for (const auto& entry : tried_) out += (out.empty() ? "" : ", ") + entry;
  return out;
}

}  // namespace trainyard::net
