// The cluster commands: nodes, token create.
#include "cli/commands.h"
#include "cli/table.h"

namespace trainyard::cli {

// ---- nodes ----

std::vector<FlagSpec> ListNodes::flags() { return {}; }

ListNodes ListNodes::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  return {};
}

std::vector<ApiRequest> ListNodes::requests(const InputReader&) const { return {{"GET", "/v1/nodes", std::nullopt}}; }

std::string ListNodes::render(const Replies& replies, const RenderContext& ctx) const {
  Table t({"NAME", "STATE", "CORES", "FREE", "LABELS", "HEARTBEAT", "REASON"});
  const Json& reply = replies.at(0);
  if (reply.is_object() && reply.contains("nodes") && reply["nodes"].is_array()) {
    for (const Json& node : reply["nodes"]) {
      t.add_row({text_of(node, "name"), text_of(node, "state"), text_of(node, "cores"), text_of(node, "free_cores"),
                 labels_of(node, "labels"), age_of(node, "last_heartbeat", ctx.now), text_of(node, "state_reason")});
    }
  }
  return t.str();
}

// ---- token create ----

std::vector<FlagSpec> CreateToken::flags() { return {{"--role", "ROLE", "user (default) or admin"}}; }

CreateToken CreateToken::parse(const ParsedArgs& args) {
  CreateToken token;
  token.user = only_positional(args, "USER");
  token.role = args.opt_string("--role").value_or("user");
  if (token.role != "user" && token.role != "admin") {
    throw InvalidInput("--role", "must be \"user\" or \"admin\", got \"" + token.role + "\"");
  }
  return token;
}

std::vector<ApiRequest> CreateToken::requests(const InputReader&) const {
  return {{"POST", "/v1/tokens", Json{{"user", user}, {"role", role}}}};
}

// The bare token, so that `TRAINYARD_TOKEN=$(trainyard token create bob)` works.
std::string CreateToken::render(const Replies& replies, const RenderContext&) const {
  return text_of(replies.at(0), "token") + "\n";
}

}  // namespace trainyard::cli
