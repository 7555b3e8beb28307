// The health commands: drain, undrain, health run, health show, health list, canaries.
#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "cli/table.h"
#include "net/http_types.h"

namespace trainyard::cli {
namespace {
std::string node_path(const std::string& node) { return "/v1/nodes/" + net::percent_encode(node); }
std::string megabytes_per_s(const Json& bytes_per_s) {
  if (!bytes_per_s.is_number()) return std::string(kAbsent);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", bytes_per_s.get<double>() / 1e6);
  return buf;
}
std::string node_state_line(const Json& node) {
  return text_of(node, "name") + " is " + text_of(node, "state") + ": " + text_of(node, "state_reason") + "\n";
}
}  // namespace

// ---- drain / undrain ----

std::vector<FlagSpec> DrainNode::flags() {
  return {{"--reason", "TEXT", "why, shown on the node"}, {"--now", "", "stop its running attempts now"}};
}

DrainNode DrainNode::parse(const ParsedArgs& args) {
  DrainNode drain;
  drain.node = only_positional(args, "NODE");
  drain.reason = args.opt_string("--reason");
  if (drain.reason && drain.reason->empty()) throw InvalidInput("--reason", "must not be empty");
  drain.now = args.has("--now");
  return drain;
}

std::vector<ApiRequest> DrainNode::requests(const InputReader&) const {
  Json body = {{"stop_attempts", now}};
  if (reason) body["reason"] = *reason;
  return {{"POST", node_path(node) + "/drain", body}};
}

std::string DrainNode::render(const Replies& replies, const RenderContext&) const { return node_state_line(replies.at(0)); }

std::vector<FlagSpec> UndrainNode::flags() { return {}; }

UndrainNode UndrainNode::parse(const ParsedArgs& args) { return UndrainNode{only_positional(args, "NODE")}; }

std::vector<ApiRequest> UndrainNode::requests(const InputReader&) const {
  return {{"POST", node_path(node) + "/undrain", std::nullopt}};
}

std::string UndrainNode::render(const Replies& replies, const RenderContext&) const {
  const Json& node = replies.at(0);
  std::string out = node_state_line(node);
  const std::string check = text_of(node, "health_check_id");
  if (check != kAbsent) out += "Health check " + check + " started; see: trainyard health show " + check + "\n";
  return out;
}

// ---- health run / show ----

std::vector<FlagSpec> RunHealthCheck::flags() {
  return {{"--suite", "SUITE", "accelerator or collective (repeatable; default both)", true}};
}

RunHealthCheck RunHealthCheck::parse(const ParsedArgs& args) {
  RunHealthCheck run;
  run.nodes = args.positionals;
  if (run.nodes.empty()) throw InvalidInput("NODE", "name at least one node");
  run.suites = args.all("--suite");
  for (const auto& suite : run.suites) {
    if (suite != "accelerator" && suite != "collective") {
      throw InvalidInput("--suite", "must be accelerator or collective, got \"" + suite + "\"");
    }
  }
  return run;
}

std::vector<ApiRequest> RunHealthCheck::requests(const InputReader&) const {
  Json body = {{"nodes", nodes}};
  if (!suites.empty()) body["suites"] = suites;
  return {{"POST", "/v1/healthchecks", body}};
}

std::string RunHealthCheck::render(const Replies& replies, const RenderContext&) const {
  const std::string id = text_of(replies.at(0), "id");
  return "Started health check " + id + "; see: trainyard health show " + id + "\n";
}

std::vector<FlagSpec> ShowHealthCheck::flags() { return {}; }

ShowHealthCheck ShowHealthCheck::parse(const ParsedArgs& args) {
  return ShowHealthCheck{parse_job_id(only_positional(args, "ID"), "ID")};
}

std::vector<ApiRequest> ShowHealthCheck::requests(const InputReader&) const {
  return {{"GET", "/v1/healthchecks/" + std::to_string(id), std::nullopt}};
}

std::string ShowHealthCheck::render(const Replies& replies, const RenderContext&) const {
  const Json& check = replies.at(0);
  Description d;
  d.add("ID", text_of(check, "id"));
  d.add("Kind", text_of(check, "kind"));
  d.add("State", text_of(check, "state"));
  d.add("Nodes", list_of(check, "nodes"));
  d.add("Suites", list_of(check, "suites"));
  d.add("Requested by", text_of(check, "requested_by"));
  d.add("Duration", text_of(check, "duration_ms") == kAbsent ? "-" : text_of(check, "duration_ms") + " ms");
  std::string out = d.str();
  Table verdicts({"NODE", "VERDICT", "REASON"});
  const Json& list = field_or_null(check, "verdicts");
  if (list.is_array()) {
    for (const Json& v : list) verdicts.add_row({text_of(v, "node"), text_of(v, "state"), text_of(v, "reason")});
  }
  out += '\n';  // not `"\n" + ...`: g++ 12 warns -Wrestrict on that at -O3
  out += verdicts.str();
  // busbw of every collective test (the whole set, then the pair tests that localised).
  const Json& runs = field_or_null(check, "collective_runs");
  if (runs.is_array() && !runs.empty()) {
    Table t({"TEST", "NODES", "RANK", "ALL_GATHER(MB/s)", "ALL_REDUCE(MB/s)", "REDUCE_SCATTER(MB/s)", "ERROR"});
    int test = 0;
    for (const Json& run : runs) {
      const Json& ranks = field_or_null(run, "ranks");
      ++test;
      if (!ranks.is_array()) continue;
      for (const Json& rank : ranks) {
        std::map<std::string, std::string> busbw;
        const Json& collectives = field_or_null(rank, "collectives");
        if (collectives.is_array()) {
          for (const Json& c : collectives) busbw[text_of(c, "kind")] = megabytes_per_s(field_or_null(c, "busbw"));
        }
        auto cell = [&](const char* kind) { return busbw.contains(kind) ? busbw[kind] : std::string(kAbsent); };
        t.add_row({std::to_string(test), list_of(run, "nodes"), text_of(rank, "rank"), cell("all_gather"),
                   cell("all_reduce"), cell("reduce_scatter"), text_of(rank, "error")});
      }
    }
    out += '\n';
    out += t.str();
  }
  return out;
}

std::vector<FlagSpec> ListHealthChecks::flags() { return {{"--limit", "N", "at most N (default 10, at most 100)"}}; }

ListHealthChecks ListHealthChecks::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  return ListHealthChecks{args.opt_integer("--limit", 1, 100)};
}

std::vector<ApiRequest> ListHealthChecks::requests(const InputReader&) const {
  Target target("/v1/healthchecks");
  target.param("limit", limit ? std::optional(std::to_string(*limit)) : std::nullopt);
  return {{"GET", target.str(), std::nullopt}};
}

// FAILED names each node whose verdict was not HEALTHY, with its state and why.
std::string ListHealthChecks::render(const Replies& replies, const RenderContext& ctx) const {
  Table t({"ID", "KIND", "STATE", "NODES", "AGE", "BY", "FAILED"});
  const Json& list = field_or_null(replies.at(0), "checks");
  if (list.is_array()) {
    for (const Json& check : list) {
      std::string failed;
      const Json& verdicts = field_or_null(check, "verdicts");
      if (verdicts.is_array()) {
        for (const Json& v : verdicts) {
          if (text_of(v, "state") == "HEALTHY") continue;
          if (!failed.empty()) failed += "; ";
          failed += text_of(v, "node") + " " + text_of(v, "state") + ": " + text_of(v, "reason");
        }
      }
      t.add_row({text_of(check, "id"), text_of(check, "kind"), text_of(check, "state"), list_of(check, "nodes"),
                 age_of(check, "created_at", ctx.now), text_of(check, "requested_by"),
                 failed.empty() ? std::string(kAbsent) : truncate(failed, 80)});
    }
  }
  return t.str();
}

// ---- canaries ----

std::vector<FlagSpec> ListCanaries::flags() { return {{"--limit", "N", "at most N (default 50)"}}; }

ListCanaries ListCanaries::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  return ListCanaries{args.opt_integer("--limit", 1, 1000)};
}

std::vector<ApiRequest> ListCanaries::requests(const InputReader&) const {
  Target target("/v1/canaries");
  target.param("limit", limit ? std::optional(std::to_string(*limit)) : std::nullopt);
  return {{"GET", target.str(), std::nullopt}};
}

std::string ListCanaries::render(const Replies& replies, const RenderContext& ctx) const {
  Table t({"ID", "STATE", "NODES", "AGE", "CLASS", "REASON"});
  const Json& list = field_or_null(replies.at(0), "canaries");
  if (list.is_array()) {
    for (const Json& job : list) {
      t.add_row({text_of(job, "id"), text_of(job, "state"), text_of(field_or_null(job, "spec"), "nodes"),
                 age_of(job, "submitted_at", ctx.now), text_of(job, "failure_class"), truncate(text_of(job, "reason"), 80)});
    }
  }
  // An older daemon does not say when the next one is due.
  if (!replies.at(0).contains("next_run_at")) return t.str();
  const Json& next = replies.at(0)["next_run_at"];
  const std::string schedule = next.is_string() ? "Next scheduled canary: " + next.get<std::string>()
                                                : "No canaries are scheduled (the daemon's --canary-interval-s is 0).";
  return t.str() + schedule + "\n";
}

std::vector<FlagSpec> RunCanary::flags() { return {}; }

RunCanary RunCanary::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  return RunCanary{};
}

std::vector<ApiRequest> RunCanary::requests(const InputReader&) const { return {{"POST", "/v1/canaries", std::nullopt}}; }

std::string RunCanary::render(const Replies& replies, const RenderContext&) const {
  const Json& job = replies.at(0);
  return "Canary job " + text_of(job, "id") + " submitted on " + text_of(field_or_null(job, "spec"), "nodes") +
         " node(s); `trainyard job " + text_of(job, "id") + "` follows it.\n";
}

}  // namespace trainyard::cli
