#include "daemon/webhook_payload.h"

#include <algorithm>
#include <set>

#include "daemon/event_json.h"

namespace trainyard::daemon {
namespace {

// Slack's mrkdwn treats &, < and > as control characters (links, mentions).
std::string slack_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string detail_text(const store::Event& event, const char* key) {
  const auto found = event.details.find(key);
  if (found == event.details.end() || !found->is_string()) return "";
  return found->get<std::string>();
}

Json mrkdwn(std::string text) { return {{"type", "mrkdwn"}, {"text", std::move(text)}}; }
Json section(std::string text) { return {{"type", "section"}, {"text", mrkdwn(std::move(text))}}; }
// Slack caps header text at 150 characters.
Json header(std::string text) {
  if (text.size() > 150) text = text.substr(0, 147) + "...";
  return {{"type", "header"}, {"text", {{"type", "plain_text"}, {"text", std::move(text)}}}};
}

std::string severity_mark(store::Severity severity) {
  switch (severity) {
    case store::Severity::error: return ":red_circle:";
    case store::Severity::warning: return ":warning:";
    case store::Severity::info: return ":information_source:";
  }
  return "";
}

std::string subject(const store::Event& event) {
  if (event.job_id) return "job " + std::to_string(*event.job_id);
  if (!event.node.empty()) return "node " + event.node;
  return "";
}

std::string dashboard_link(const store::Event& event, std::string_view public_url) {
  if (public_url.empty()) return "";
  std::string base(public_url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (event.job_id) return "<" + base + "/jobs/" + std::to_string(*event.job_id) + "|Open job " + std::to_string(*event.job_id) + ">";
  if (!event.node.empty()) return "<" + base + "/nodes/" + event.node + "|Open node " + slack_escape(event.node) + ">";
  return "";
}

Json slack_fields(const store::Event& event) {
  Json fields = Json::array();
  const auto add = [&](const char* name, const std::string& value) {
    if (!value.empty()) fields.push_back(mrkdwn("*" + std::string(name) + "*\n" + slack_escape(value)));
  };
  add("Job", event.job_id ? std::to_string(*event.job_id) : "");
  add("Share", event.share);
  add("Node", event.node);
  add("Class", detail_text(event, "class"));
  return fields;
}

Json slack_message(const store::Event& event, std::string_view public_url) {
  const std::string about = subject(event);
  Json blocks = Json::array();
  blocks.push_back(header(event.kind + (about.empty() ? "" : ": " + about)));
  blocks.push_back(section(severity_mark(event.severity) + " " + slack_escape(event.message)));
  if (Json fields = slack_fields(event); !fields.empty()) blocks.push_back({{"type", "section"}, {"fields", std::move(fields)}});
  if (const std::string suggestion = detail_text(event, "suggestion"); !suggestion.empty()) {
    blocks.push_back(section("*Suggestion:* " + slack_escape(suggestion)));
  }
  if (const std::string link = dashboard_link(event, public_url); !link.empty()) blocks.push_back(section(link));
  return {{"text", "[" + to_string(event.severity) + "] " + slack_escape(event.message)}, {"blocks", std::move(blocks)}};
}

// "node_lost on trn-7, trn-8 ...": what the folded events of one kind have in common.
std::string kind_summary(const std::string& kind, std::span<const store::Event> events) {
  static constexpr std::size_t kNamesShown = 5;
  std::size_t count = 0;
  std::set<std::string> classes;
  std::vector<std::string> nodes;
  for (const store::Event& e : events) {
    if (e.kind != kind) continue;
    ++count;
    if (std::string c = detail_text(e, "class"); !c.empty()) classes.insert(std::move(c));
    if (!e.node.empty() && std::find(nodes.begin(), nodes.end(), e.node) == nodes.end()) nodes.push_back(e.node);
  }
  std::string line = std::to_string(count) + " more " + kind;
  std::string about;
  for (const std::string& c : classes) about += (about.empty() ? "" : ", ") + c;
  if (!nodes.empty()) {
    about += about.empty() ? "on " : " on ";
    for (std::size_t i = 0; i < nodes.size() && i < kNamesShown; ++i) about += (i ? ", " : "") + nodes[i];
    if (nodes.size() > kNamesShown) about += " ...";
  }
  if (about.empty()) return line;
  return line + (classes.empty() ? " " : ": ") + about;
}

}  // namespace

std::string to_string(WebhookFormat format) { return format == WebhookFormat::slack ? "slack" : "json"; }

std::optional<WebhookFormat> parse_webhook_format(std::string_view text) {
  if (text == "slack") return WebhookFormat::slack;
  if (text == "json") return WebhookFormat::json;
  return std::nullopt;
}

FoldedEvents fold_events(std::span<const store::Event> events) {
  FoldedEvents folded{events.front().seq, events.back().seq, events.size(), ""};
  std::vector<std::string> kinds;  // in order of first appearance
  for (const store::Event& e : events) {
    if (std::find(kinds.begin(), kinds.end(), e.kind) == kinds.end()) kinds.push_back(e.kind);
  }
  for (const std::string& kind : kinds) folded.message += (folded.message.empty() ? "" : "; ") + kind_summary(kind, events);
  return folded;
}

Json webhook_payload(const store::Event& event, WebhookFormat format, std::string_view public_url) {
  return format == WebhookFormat::json ? event_json(event) : slack_message(event, public_url);
}

Json webhook_payload(const FoldedEvents& folded, WebhookFormat format) {
  const std::string line = folded.message + " (events " + std::to_string(folded.first_seq) + "-" +
                           std::to_string(folded.last_seq) + " in GET /v1/events)";
  if (format == WebhookFormat::json) {
    return {{"type", "webhook.folded"},
            {"count", folded.count},
            {"first_id", folded.first_seq},
            {"last_id", folded.last_seq},
            {"message", line}};
  }
  return {{"text", slack_escape(line)},
          {"blocks", Json::array({header("Storm: " + std::to_string(folded.count) + " events folded"), section(slack_escape(line))})}};
}

}  // namespace trainyard::daemon
