// The cluster commands: nodes, shares, fault, token create.
#include <cstdio>

#include "cli/commands.h"
#include "cli/table.h"
#include "proto/state_list.h"
#include "net/http_types.h"

namespace trainyard::cli {

// ---- nodes ----

std::vector<FlagSpec> ListNodes::flags() {
  std::vector<FlagSpec> flags = {
      {"--state", "S", "only nodes in these states, comma-separated (HEALTHY, SUSPECT, UNHEALTHY, DRAINED, DOWN)"}};
  for (FlagSpec& flag : watch_flags()) flags.push_back(std::move(flag));
  return flags;
}

ListNodes ListNodes::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  ListNodes list;
  if (auto states = args.opt_string("--state")) list.states = parse_node_states("--state", *states);
  list.watch_s = parse_watch(args);
  return list;
}

namespace {
// "#12 HEALTHY 3m": the latest health check, its verdict on this node, and its age.
std::string last_check_of(const Json& node, TimePoint now) {
  const Json& check = field_or_null(node, "last_check");
  if (!check.is_object()) return std::string(kAbsent);
  std::string line = "#";  // appended, not `"#" + text_of(...)`: that trips g++ 12's -Wrestrict at -O3
  line += text_of(check, "id");
  return line + " " + text_of(check, "verdict") + " " + age_of(check, "at", now);
}
}  // namespace

std::vector<ApiRequest> ListNodes::requests(const InputReader&) const {
  const auto state = states.empty() ? std::nullopt : std::optional(node_states_text(states));
  return {{"GET", Target("/v1/nodes").param("state", state).str(), std::nullopt}};
}

std::string ListNodes::render(const Replies& replies, const RenderContext& ctx) const {
  Table t({"NAME", "STATE", "CORES", "FREE", "LABELS", "FAULTS", "LAST_CHECK", "HEARTBEAT", "REASON"});
  const Json& reply = replies.at(0);
  if (reply.is_object() && reply.contains("nodes") && reply["nodes"].is_array()) {
    for (const Json& node : reply["nodes"]) {
      t.add_row({text_of(node, "name"), text_of(node, "state"), text_of(node, "cores"), text_of(node, "free_cores"),
                 labels_of(node, "labels"), list_of(node, "faults"), last_check_of(node, ctx.now),
                 age_of(node, "last_heartbeat", ctx.now),
                 text_of(node, "state_reason")});
    }
  }
  return t.str();
}

// ---- node ----

std::vector<FlagSpec> ShowNode::flags() { return {}; }

ShowNode ShowNode::parse(const ParsedArgs& args) { return ShowNode{only_positional(args, "NAME")}; }

std::vector<ApiRequest> ShowNode::requests(const InputReader&) const {
  return {{"GET", "/v1/nodes/" + net::percent_encode(name), std::nullopt}};
}

namespace {
std::string disks_of(const Json& node) {
  const Json& disks = field_or_null(node, "disks");
  if (!disks.is_array() || disks.empty()) return std::string(kAbsent);
  std::string text;
  for (const Json& disk : disks) {
    if (!text.empty()) text += ", ";
    text += text_of(disk, "role") + " " + text_of(disk, "free_mb") + " MiB free of " + text_of(disk, "total_mb");
  }
  return text;
}
}  // namespace

std::string ShowNode::render(const Replies& replies, const RenderContext& ctx) const {
  const Json& node = replies.at(0);
  Description d;
  d.add("Name", text_of(node, "name"));
  // ", for 3m" when the time is known.
  const auto age_in = [&](std::string_view key, std::string_view before, std::string_view after = "") {
    const std::string age = age_of(node, key, ctx.now);
    return age == kAbsent ? std::string() : std::string(before) + age + std::string(after);
  };
  d.add("State", text_of(node, "state") + age_in("state_since", ", for "));
  d.add("Reason", text_of(node, "state_reason"));
  d.add("Connected", text_of(node, "connected") + age_in("last_heartbeat", ", last heartbeat ", " ago"));
  d.add("Cores", text_of(node, "used_cores") + " used of " + text_of(node, "cores") + ", " + text_of(node, "free_cores") +
                     " free for new work");
  d.add("Memory", text_of(node, "memory_mb") + " MiB");
  d.add("Jobs", list_of(node, "jobs"));
  d.add("Attempts", list_of(node, "attempts"));
  d.add("Last check", last_check_of(node, ctx.now));
  d.add("Labels", labels_of(node, "labels"));
  d.add("Faults", list_of(node, "faults"));
  d.add("Disks", disks_of(node));
  d.add("Agent", text_of(node, "agent_version"));
  d.add("Cgroups", text_of(node, "cgroups"));
  d.add("Job network", text_of(node, "job_network"));
  return d.str();
}

// ---- shares ----

std::vector<FlagSpec> ListShares::flags() { return {}; }

ListShares ListShares::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  return {};
}

std::vector<ApiRequest> ListShares::requests(const InputReader&) const { return {{"GET", "/v1/shares", std::nullopt}}; }

std::vector<FlagSpec> DeleteShare::flags() { return {}; }

DeleteShare DeleteShare::parse(const ParsedArgs& args) { return DeleteShare{only_positional(args, "NAME")}; }

std::vector<ApiRequest> DeleteShare::requests(const InputReader&) const {
  return {{"DELETE", "/v1/shares/" + net::percent_encode(name), std::nullopt}};
}

std::string DeleteShare::render(const Replies&, const RenderContext&) const { return "Deleted share " + name + "\n"; }

namespace {
std::string fixed_field(const Json& row, const char* key, int digits, double scale = 1.0) {
  const Json& v = field_or_null(row, key);
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>() / scale);
  return buf;
}
}  // namespace

// Like `sshare`: usage in core-hours, the normalised usage and the factor F = 2^(-U/S).
std::string ListShares::render(const Replies& replies, const RenderContext&) const {
  Table t({"SHARE", "WEIGHT", "CAP", "USAGE(core-h)", "NORM_USAGE", "FACTOR", "RUNNING_CORES", "PENDING"});
  const Json& shares = field_or_null(replies.at(0), "shares");
  if (shares.is_array()) {
    for (const Json& row : shares) {
      t.add_row({text_of(row, "name"), fixed_field(row, "weight", 2), text_of(row, "max_running_cores"),
                 fixed_field(row, "usage_core_s", 2, 3600.0), fixed_field(row, "normalized_usage", 4),
                 fixed_field(row, "fair_share_factor", 4), text_of(row, "running_cores"),
                 text_of(row, "pending_jobs")});
    }
  }
  return t.str();
}

// ---- fault ----

std::vector<FlagSpec> SetFaults::flags() { return {{"--clear", "", "remove every injected fault"}}; }

SetFaults SetFaults::parse(const ParsedArgs& args) {
  if (args.positionals.empty()) throw InvalidInput("NODE", "is required");
  SetFaults faults;
  faults.node = args.positionals.front();
  faults.specs.assign(args.positionals.begin() + 1, args.positionals.end());
  const bool clear = args.has("--clear");
  if (clear && !faults.specs.empty()) throw InvalidInput("--clear", "takes no fault specs");
  if (!clear && faults.specs.empty()) throw InvalidInput("SPEC", "give at least one fault, or --clear");
  return faults;
}

std::vector<ApiRequest> SetFaults::requests(const InputReader&) const {
  const std::string path = "/v1/nodes/" + net::percent_encode(node) + "/faults";
  if (specs.empty()) return {{"DELETE", path, std::nullopt}};
  return {{"PUT", path, Json{{"faults", specs}}}};
}

std::string SetFaults::render(const Replies& replies, const RenderContext&) const {
  const std::string faults = list_of(replies.at(0), "faults");
  return faults == kAbsent ? "Clearing the faults of " + node + "\n" : "Injecting into " + node + ": " + faults + "\n";
}

}  // namespace trainyard::cli
