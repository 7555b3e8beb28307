// Tokens: create, list (never a secret), revoke, and rotate the agents' join token.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/api/auditor.h"
#include "daemon/api/call.h"
#include "daemon/api/paging.h"
#include "daemon/api/tokens.h"
#include "daemon/base/auth.h"
#include "daemon/base/store_worker.h"
#include "daemon/canary.h"
#include "daemon/nodes/join_token.h"

namespace trainyard::daemon {
namespace {

// A token as listed: never its secret nor its hash.
Json token_json(const store::TokenRecord& t) {
  return {{"id", t.id},
          {"user", t.user},
          {"role", to_string(t.role)},
          {"created_at", format_time(t.created_at)},
          {"expires_at", t.expires_at ? Json(format_time(*t.expires_at)) : Json(nullptr)},
          {"last_used_at", t.last_used_at ? Json(format_time(*t.last_used_at)) : Json(nullptr)}};
}

}  // namespace

void TokensApi::create_token(ApiCall call) {
  store::TokenRecord record;
  try {
    const Json body = parse_json_text(call.request.body);
    ObjectReader r(body, "");
    record.user = r.string("user", 1, 64);
    check_name("user", record.user);
    if (record.user == kCanaryUser) {
      throw InvalidInput("user", "\"" + record.user + "\" is the daemon's own user (its canaries)");
    }
    const auto role = store::parse_role(r.opt_string("role", 1, 16).value_or("user"));
    if (!role || *role == store::Role::agent) {
      throw InvalidInput("role", "must be \"admin\", \"operator\", \"user\" or \"viewer\"");
    }
    record.role = *role;
    if (auto ttl = r.opt_integer("ttl_s", 1, kMaxTokenTtlS)) record.expires_at = clock_.system_now() + std::chrono::seconds(*ttl);
    r.finish();
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  const std::string secret = generate_token_secret();
  const auto expires_at = record.expires_at;
  record = new_token_record(secret, record.user, record.role, clock_.system_now());
  record.expires_at = expires_at;
  store::Change change;
  change.tokens.push_back(record);
  change.events.push_back(
      audit_.event(call, {"token.created",
                          call.route(),
                          record.id,
                          {{"user", record.user},
                           {"role", to_string(record.role)},
                           {"expires_at", expires_at ? Json(format_time(*expires_at)) : Json(nullptr)}}}));
  store_.write(std::move(change), [this, call, record, secret](const Result<void>& written, store::Change&) {
    if (!written) return call.fail(Error::unavailable("the new token could not be stored; nothing was changed"));
    tokens_.add(record);
    spdlog::info("event=token_created id={} user={} role={} by={}", record.id, record.user, to_string(record.role),
                 call.who.user);
    Json body = token_json(record);
    body["token"] = secret;
    call.reply(201, body);
  });
}

void TokensApi::whoami(ApiCall call) {
  call.reply(200, {{"user", call.who.user}, {"role", to_string(call.who.role)}, {"token_id", call.who.token_id}});
}

namespace {

// A token's place in the list, which is ordered by creation time, then id.
std::string token_position(const store::TokenRecord& t) { return std::to_string(to_unix_ms(t.created_at)) + " " + t.id; }

bool listed_after(const store::TokenRecord& t, const std::string& position) {
  const auto space = position.find(' ');
  if (space == std::string::npos) throw InvalidInput("cursor", "is not a token list's cursor");
  const std::int64_t created_ms = cursor_number(position.substr(0, space));
  return std::pair(to_unix_ms(t.created_at), std::string_view(t.id)) >
         std::pair(created_ms, std::string_view(position).substr(space + 1));
}

}  // namespace

// Without a limit every token, as the CLI lists them.
void TokensApi::list_tokens(ApiCall call) {
  const PageRequest page = page_request(call.request, "tokens", std::nullopt);
  const bool all = call.who.may(Action::manage_tokens);
  std::vector<store::TokenRecord> visible = tokens_.list();
  std::erase_if(visible, [&](const store::TokenRecord& t) {
    return (!all && t.user != call.who.user) || (page.after && !listed_after(t, *page.after));
  });
  Json next = nullptr;
  if (page.limit && visible.size() > *page.limit) {
    visible.erase(visible.begin() + static_cast<std::ptrdiff_t>(*page.limit), visible.end());
    next = page_cursor(call.request, "tokens", token_position(visible.back()));
  }
  Json list = Json::array();
  for (const store::TokenRecord& token : visible) list.push_back(token_json(token));
  call.reply(200, {{"tokens", list}, {"next", next}});
}

// Anyone may revoke their own tokens (giving up access changes nothing else); only token managers
// others'. Another user's token answers as a missing one does.
void TokensApi::revoke_token(ApiCall call) {
  const std::string& id = call.param("token_id");
  auto token = tokens_.find_by_id(id);
  if (!token) token = unstored_revocation(id);
  if (!token || (!call.who.may(Action::manage_tokens) && token->user != call.who.user)) {
    return call.fail(Error::not_found("token " + id + " does not exist"));
  }
  // Gone from memory at once: its next request is refused, and an agent it connected is closed.
  tokens_.remove(token->hash);
  spdlog::warn("event=token_revoked id={} user={} role={} by={}", token->id, token->user, to_string(token->role),
               call.who.user);
  store::Change change;
  change.revoked_tokens.push_back(token->hash);
  change.events.push_back(audit_.event(
      call, {"token.revoked", call.route(), token->id, {{"user", token->user}, {"role", to_string(token->role)}}}));
  store_.write(std::move(change), [this, call, revoked = *token](const Result<void>& written, store::Change&) {
    if (!written) {
      // Kept, so that revoking it again finds it and stores what memory already did.
      unstored_revocations_.insert_or_assign(revoked.id, revoked);
      return call.fail(Error::unavailable("token " + revoked.id +
                                          " is revoked until the daemon restarts, but its revocation could not be "
                                          "stored; revoke it again"));
    }
    unstored_revocations_.erase(revoked.id);
    call.reply(200, {{"id", revoked.id}, {"revoked", true}});
  });
}

std::optional<store::TokenRecord> TokensApi::unstored_revocation(const std::string& id) const {
  const auto it = unstored_revocations_.find(id);
  if (it == unstored_revocations_.end()) return std::nullopt;
  return it->second;
}

void TokensApi::rotate_join_token(ApiCall call) {
  trainyard::daemon::rotate_join_token(
      tokens_, store_, join_token_file_, clock_.system_now(),
      [call, by = call.who.user](const Result<std::string>& secret) {
        if (!secret) return call.fail(secret.error());
        spdlog::info("event=join_token_rotated_by user={}", by);
        call.reply(200, {{"token", *secret}});
      },
      audit_.of(call, "token.join_rotated", Json::object()));
}

}  // namespace trainyard::daemon
