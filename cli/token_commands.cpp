// token create, token list, token revoke, token rotate-join.
#include "cli/commands.h"
#include "cli/table.h"
#include "net/http_types.h"
#include "proto/time_window.h"

namespace trainyard::cli {
namespace {

constexpr std::int64_t kMaxTtlS = 10LL * 365 * 24 * 3600;  // the daemon's limit

}  // namespace

// ---- token create ----

std::vector<FlagSpec> CreateToken::flags() {
  return {{"--role", "ROLE", "admin, operator, user (default) or viewer"},
          {"--ttl", "DURATION", "expire after this long: seconds, or 90s, 45m, 12h, 30d"}};
}

CreateToken CreateToken::parse(const ParsedArgs& args) {
  CreateToken token;
  token.user = only_positional(args, "USER");
  token.role = args.opt_string("--role").value_or("user");
  if (token.role != "admin" && token.role != "operator" && token.role != "user" && token.role != "viewer") {
    throw InvalidInput("--role", "must be admin, operator, user or viewer, got \"" + token.role + "\"");
  }
  if (auto ttl = args.opt_string("--ttl")) token.ttl_s = parse_duration_s(*ttl, "--ttl", kMaxTtlS);
  return token;
}

std::vector<ApiRequest> CreateToken::requests(const InputReader&) const {
  Json body{{"user", user}, {"role", role}};
  if (ttl_s) body["ttl_s"] = *ttl_s;
  return {{"POST", "/v1/tokens", body}};
}

// The bare token, so that `TRAINYARD_TOKEN=$(trainyard token create bob)` works.
std::string CreateToken::render(const Replies& replies, const RenderContext&) const {
  return text_of(replies.at(0), "token") + "\n";
}

// ---- token list ----

std::vector<FlagSpec> ListTokens::flags() { return {}; }

ListTokens ListTokens::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput("token list", "takes no arguments");
  return {};
}

std::vector<ApiRequest> ListTokens::requests(const InputReader&) const { return {{"GET", "/v1/tokens", std::nullopt}}; }

std::string ListTokens::render(const Replies& replies, const RenderContext& ctx) const {
  Table t({"ID", "USER", "ROLE", "AGE", "EXPIRES", "LAST_USED"});
  const Json& tokens = field_or_null(replies.at(0), "tokens");
  if (tokens.is_array()) {
    for (const Json& row : tokens) {
      t.add_row({terminal_safe(text_of(row, "id")), terminal_safe(text_of(row, "user")), text_of(row, "role"),
                 age_of(row, "created_at", ctx.now), text_of(row, "expires_at"), age_of(row, "last_used_at", ctx.now)});
    }
  }
  return t.str();
}

// ---- token revoke ----

std::vector<FlagSpec> RevokeToken::flags() { return {}; }

RevokeToken RevokeToken::parse(const ParsedArgs& args) { return RevokeToken{only_positional(args, "ID")}; }

std::vector<ApiRequest> RevokeToken::requests(const InputReader&) const {
  return {{"DELETE", "/v1/tokens/" + net::percent_encode(id), std::nullopt}};
}

std::string RevokeToken::render(const Replies&, const RenderContext&) const { return "Revoked token " + id + "\n"; }

// ---- token rotate-join ----

std::vector<FlagSpec> RotateJoinToken::flags() { return {}; }

RotateJoinToken RotateJoinToken::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput("token rotate-join", "takes no arguments");
  return {};
}

std::vector<ApiRequest> RotateJoinToken::requests(const InputReader&) const {
  return {{"POST", "/v1/tokens/join/rotate", std::nullopt}};
}

// The bare token, for `--join-token-file` of agents started from now on.
std::string RotateJoinToken::render(const Replies& replies, const RenderContext&) const {
  return text_of(replies.at(0), "token") + "\n";
}

}  // namespace trainyard::cli
