// webhook add, list, show, rm, test, deliveries.
#include <sstream>

#include "cli/webhook_commands.h"

#include "cli/commands.h"
#include "cli/table.h"

namespace trainyard::cli {
namespace {

constexpr std::int64_t kMaxId = INT64_MAX;

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::int64_t webhook_id(const ParsedArgs& args) { return parse_integer("ID", only_positional(args, "ID"), 1, kMaxId); }

std::string path_of(std::int64_t id) { return "/v1/webhooks/" + std::to_string(id); }

std::string describe(const Json& w) {
  std::string events;
  for (const Json& e : field_or_null(w, "events")) events += (events.empty() ? "" : ",") + e.get<std::string>();
  return "ID:      " + text_of(w, "id") + "\nURL:     " + terminal_safe(text_of(w, "url")) + "\nEvents:  " +
         terminal_safe(events) + "\nFormat:  " + text_of(w, "format") + "\nFilter:  " +
         terminal_safe(field_or_null(w, "filter").dump()) + "\nOwner:   " + terminal_safe(text_of(w, "owner")) +
         "\nCursor:  " + text_of(w, "cursor") + "\n";
}

}  // namespace

// ---- webhook add ----

std::vector<FlagSpec> AddWebhook::flags() {
  return {{"--events", "TYPES", "event types or globs, comma-separated (job.failed,node.*)"},
          {"--format", "FORMAT", "slack (default) or json"},
          {"--share", "SHARE", "only events of this share's jobs"},
          {"--job", "ID", "only events of this job"},
          {"--user", "USER", "only events of this user's jobs (admins; a user's webhook is always their own)"}};
}

AddWebhook AddWebhook::parse(const ParsedArgs& args) {
  AddWebhook add;
  const std::string url = only_positional(args, "URL");
  const auto events = args.opt_string("--events");
  if (!events || split_commas(*events).empty()) throw InvalidInput("--events", "name at least one event type or glob");
  add.body = {{"url", url}, {"events", split_commas(*events)}, {"format", args.opt_string("--format").value_or("slack")}};
  Json filter = Json::object();
  if (auto share = args.opt_string("--share")) filter["share"] = *share;
  if (auto user = args.opt_string("--user")) filter["user"] = *user;
  if (auto job = args.opt_string("--job")) filter["job"] = parse_job_id(*job, "--job");
  if (!filter.empty()) add.body["filter"] = filter;
  return add;
}

std::vector<ApiRequest> AddWebhook::requests(const InputReader&) const { return {{"POST", "/v1/webhooks", body}}; }

std::string AddWebhook::render(const Replies& replies, const RenderContext&) const {
  return describe(replies.at(0)) + "Secret:  " + text_of(replies.at(0), "secret") +
         "\n(shown once: the receiver checks X-Trainyard-Signature with it)\n";
}

// ---- webhook list ----

std::vector<FlagSpec> ListWebhooks::flags() { return {}; }

ListWebhooks ListWebhooks::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput("webhook list", "takes no arguments");
  return {};
}

std::vector<ApiRequest> ListWebhooks::requests(const InputReader&) const { return {{"GET", "/v1/webhooks", std::nullopt}}; }

std::string ListWebhooks::render(const Replies& replies, const RenderContext& ctx) const {
  Table t({"ID", "OWNER", "FORMAT", "EVENTS", "URL", "AGE"});
  for (const Json& w : field_or_null(replies.at(0), "webhooks")) {
    std::string events;
    for (const Json& e : field_or_null(w, "events")) {  // appended: `"," + text` trips g++ 12's false -Wrestrict at -O3
      if (!events.empty()) events += ',';
      events += e.get<std::string>();
    }
    t.add_row({text_of(w, "id"), terminal_safe(text_of(w, "owner")), text_of(w, "format"), terminal_safe(events),
               terminal_safe(text_of(w, "url")), age_of(w, "created_at", ctx.now)});
  }
  return t.str();
}

// ---- webhook show, rm, test ----

std::vector<FlagSpec> ShowWebhook::flags() { return {}; }
ShowWebhook ShowWebhook::parse(const ParsedArgs& args) { return ShowWebhook{webhook_id(args)}; }
std::vector<ApiRequest> ShowWebhook::requests(const InputReader&) const { return {{"GET", path_of(id), std::nullopt}}; }
std::string ShowWebhook::render(const Replies& replies, const RenderContext&) const { return describe(replies.at(0)); }

std::vector<FlagSpec> RemoveWebhook::flags() { return {}; }
RemoveWebhook RemoveWebhook::parse(const ParsedArgs& args) { return RemoveWebhook{webhook_id(args)}; }
std::vector<ApiRequest> RemoveWebhook::requests(const InputReader&) const {
  return {{"DELETE", path_of(id), std::nullopt}};
}
std::string RemoveWebhook::render(const Replies&, const RenderContext&) const {
  return "Deleted webhook " + std::to_string(id) + "\n";
}

std::vector<FlagSpec> TestWebhook::flags() { return {}; }
TestWebhook TestWebhook::parse(const ParsedArgs& args) { return TestWebhook{webhook_id(args)}; }
std::vector<ApiRequest> TestWebhook::requests(const InputReader&) const {
  return {{"POST", path_of(id) + "/test", std::nullopt}};
}
std::string TestWebhook::render(const Replies& replies, const RenderContext&) const {
  const Json& r = replies.at(0);
  if (r.value("delivered", false)) return "Delivered (HTTP " + text_of(r, "status") + ", " + text_of(r, "latency_ms") + " ms)\n";
  return "Not delivered: " + terminal_safe(text_of(r, "error")) + "\n";
}

// ---- webhook deliveries ----

std::vector<FlagSpec> ListWebhookDeliveries::flags() { return {{"--limit", "N", "at most N (default 100)"}}; }

ListWebhookDeliveries ListWebhookDeliveries::parse(const ParsedArgs& args) {
  ListWebhookDeliveries list{webhook_id(args), std::nullopt};
  if (auto limit = args.opt_string("--limit")) list.limit = parse_integer("--limit", *limit, 1, 1000);
  return list;
}

std::vector<ApiRequest> ListWebhookDeliveries::requests(const InputReader&) const {
  std::string target = path_of(id) + "/deliveries";
  if (limit) target += "?limit=" + std::to_string(*limit);
  return {{"GET", target, std::nullopt}};
}

namespace {

// What a delivery carried, by type: "job.failed, job.started x2"; its event ids when the daemon
// did not name the types.
std::string delivered_text(const Json& delivery) {
  const Json& types = field_or_null(delivery, "event_types");
  if (!types.is_object() || types.empty()) {
    const std::string first = text_of(delivery, "first_event");
    const std::string last = text_of(delivery, "last_event");
    return "events " + (first == last ? first : first + "-" + last);
  }
  std::string text;
  for (const auto& [type, n] : types.items()) {
    text += (text.empty() ? "" : ", ") + terminal_safe(type) + (n.is_number_integer() && n.get<int>() > 1 ? " x" + n.dump() : "");
  }
  return text;
}

}  // namespace

std::string ListWebhookDeliveries::render(const Replies& replies, const RenderContext& ctx) const {
  Table t({"N", "EVENTS", "STATE", "ATTEMPTS", "LAST", "NEXT_RETRY", "AGE"});
  for (const Json& d : field_or_null(replies.at(0), "deliveries")) {
    std::string answer;
    if (const Json& log = field_or_null(d, "log"); log.is_array() && !log.empty()) {
      const Json& newest = log.back();
      answer = newest.contains("error") ? terminal_safe(text_of(newest, "error")) : "HTTP " + text_of(newest, "status");
    }
    t.add_row({text_of(d, "n"), delivered_text(d), text_of(d, "state"), text_of(d, "attempts"),
               answer, text_of(d, "next_retry_at"), age_of(d, "first_attempt_at", ctx.now)});
  }
  return t.str();
}

}  // namespace trainyard::cli
