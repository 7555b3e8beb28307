#include "daemon/webhooks/webhook_payload.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "daemon/base/attempt_outcome.h"
#include "daemon/events/event_json.h"
#include "daemon/webhooks/webhook_storm.h"

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

// Slack's limits: a section's text and a field at most 3,000 and 2,000 characters, a header 150,
// 10 fields a section, 50 blocks a message (ours never come near that).
constexpr std::size_t kSectionChars = 3000;
constexpr std::size_t kFieldChars = 2000;
constexpr std::size_t kHeaderChars = 150;

// Cut on a character boundary, so a cut never leaves half a UTF-8 sequence.
std::string bounded(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

// A job's own "```" would close the code block its output is quoted in: a zero-width space
// between backticks, and between its backticks and the block's fences, keeps them looking the
// same and never a fence.
std::string unfenced(std::string_view text) {
  constexpr std::string_view kZeroWidthSpace = "\u200b";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '`' && (i == 0 || text[i - 1] == '`')) out += kZeroWidthSpace;
    out += text[i];
  }
  if (out.ends_with('`')) out += kZeroWidthSpace;
  return out;
}

Json mrkdwn(std::string text) { return {{"type", "mrkdwn"}, {"text", std::move(text)}}; }
Json section(std::string text) { return {{"type", "section"}, {"text", mrkdwn(bounded(std::move(text), kSectionChars))}}; }
Json header(std::string text) {
  return {{"type", "header"}, {"text", {{"type", "plain_text"}, {"text", bounded(std::move(text), kHeaderChars)}, {"emoji", true}}}};
}

std::string severity_mark(store::Severity severity) {
  switch (severity) {
    case store::Severity::error: return ":red_circle:";
    case store::Severity::warning: return ":warning:";
    case store::Severity::info: return ":information_source:";
  }
  return "";
}

// The state an event tells, as a Slack user reads it at a glance; the severity's mark otherwise.
std::string state_mark(const store::Event& event) {
  static const std::map<std::string_view, std::string_view> kMarks = {{"job.succeeded", ":white_check_mark:"},
                                                                      {"job.failed", ":x:"},
                                                                      {"job.retrying", ":repeat:"},
                                                                      {"job.stuck", ":hourglass:"},
                                                                      {"job.straggler", ":turtle:"},
                                                                      {"job.checkpoint_failed", ":floppy_disk:"},
                                                                      {"job.cancelled", ":no_entry_sign:"},
                                                                      {"job.requeued", ":arrows_counterclockwise:"},
                                                                      {"job.preempted", ":arrows_counterclockwise:"},
                                                                      {"node.down", ":red_circle:"},
                                                                      {"node.unhealthy", ":red_circle:"},
                                                                      {"node.suspect", ":large_yellow_circle:"},
                                                                      {"node.healthy", ":large_green_circle:"},
                                                                      {"node.drained", ":construction:"},
                                                                      {"canary.failed", ":x:"},
                                                                      {"canary.succeeded", ":white_check_mark:"}};
  const auto found = kMarks.find(event.kind);
  return found != kMarks.end() ? std::string(found->second) : severity_mark(event.severity);
}

std::string job_ref(const store::Event& event) {
  const std::string ref = detail_text(event, "job_ref");
  return !ref.empty() ? ref : std::to_string(*event.job_id);
}

// "Job 25 train-llm failed: oom", "Node trn-7 is DOWN", else the event's own line.
std::string title(const store::Event& event) {
  std::string verb = event.kind.substr(event.kind.find('.') + 1);
  std::replace(verb.begin(), verb.end(), '_', ' ');
  if (event.job_id) {
    const std::string name = detail_text(event, "name");
    const std::string cls = detail_text(event, "class");
    return "Job " + job_ref(event) + (name.empty() ? "" : " " + name) + " " + verb +
           (cls.empty() || event.kind == "job.retrying" ? "" : ": " + cls) +
           (event.kind == "job.retrying" && !cls.empty() ? " after " + cls : "");
  }
  if (!event.node.empty() && event.kind.starts_with("node.")) {
    const std::string state = detail_text(event, "state");
    return "Node " + event.node + (state.empty() ? " " + verb : " is " + state);
  }
  return event.message;
}

// 3.2 s, 4 min 10 s, 2 h 05 min: a duration a person reads.
std::string duration_text(double seconds) {
  char buf[48];
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  } else if (seconds < 3600) {
    std::snprintf(buf, sizeof buf, "%d min %02d s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  } else {
    const auto minutes = static_cast<long long>(seconds) / 60;
    std::snprintf(buf, sizeof buf, "%lld h %02lld min", minutes / 60, minutes % 60);
  }
  return buf;
}

std::string dashboard_url(const store::Event& event, std::string_view public_url) {
  if (public_url.empty()) return "";
  std::string base(public_url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (event.job_id) return base + "/jobs/" + std::to_string(*event.job_id);
  if (!event.node.empty() && event.node.find(',') == std::string::npos) return base + "/nodes/" + event.node;
  return "";
}

Json slack_fields(const store::Event& event) {
  Json fields = Json::array();
  const auto add = [&](const char* name, const std::string& value) {
    if (!value.empty()) fields.push_back(mrkdwn(bounded("*" + std::string(name) + "*\n" + slack_escape(value), kFieldChars)));
  };
  add("User", event.user);
  add("Share", event.share);
  const std::string nodes = detail_text(event, "nodes");
  add(nodes.empty() ? "Node" : "Nodes", nodes.empty() ? event.node : nodes);
  if (const auto attempt = event.details.find("attempt"); attempt != event.details.end() && attempt->is_number()) {
    add("Attempt", std::to_string(attempt->get<std::int64_t>()));
  }
  if (const auto ran = event.details.find("duration_s"); ran != event.details.end() && ran->is_number()) {
    add("Duration", duration_text(ran->get<double>()));
  }
  add("Class", detail_text(event, "class"));
  return fields;
}

// What a phone's notification shows: the event's line, with the job's name after its id ("job 17
// `train-llm` failed (oom): ..."), so the job is known before the message is opened.
std::string notification_text(const store::Event& event) {
  std::string line = event.message;
  std::string name = detail_text(event, "name");
  std::erase(name, '`');
  if (event.job_id && !name.empty()) {
    for (const std::string& id : {job_ref(event), std::to_string(*event.job_id)}) {
      const std::string lead = "job " + id + " ";
      if (line.starts_with(lead)) {
        line = lead + "`" + name + "` " + line.substr(lead.size());
        break;
      }
    }
  }
  return "[" + to_string(event.severity) + "] " + slack_escape(line);
}

// Header with the state's mark; the event's sentence; the fields; the suggestion; the failing
// rank's last output in a code block; a button to the dashboard page (with --public-url).
Json slack_message(const store::Event& event, std::string_view public_url) {
  Json blocks = Json::array();
  blocks.push_back(header(state_mark(event) + " " + title(event)));
  blocks.push_back(section(slack_escape(event.message)));
  if (Json fields = slack_fields(event); !fields.empty()) blocks.push_back({{"type", "section"}, {"fields", std::move(fields)}});
  if (const std::string suggestion = detail_text(event, "suggestion"); !suggestion.empty()) {
    blocks.push_back(section("*Suggestion:* " + slack_escape(suggestion)));
  }
  if (const std::string output = detail_text(event, "output"); !output.empty()) {
    // Cut before the fences are added, so the block always closes.
    blocks.push_back(section("*Last output*\n```" + bounded(unfenced(slack_escape(output)), kSectionChars - 32) + "```"));
  }
  if (const std::string url = dashboard_url(event, public_url); !url.empty()) {
    const std::string label = event.job_id ? "Open job " + job_ref(event) : "Open node " + event.node;
    blocks.push_back({{"type", "actions"},
                      {"elements", Json::array({{{"type", "button"},
                                                 {"text", {{"type", "plain_text"}, {"text", bounded(label, 75)}}},
                                                 {"url", url}}})}});
  }
  blocks.push_back({{"type", "context"},
                    {"elements", Json::array({mrkdwn(event.kind + " · event " + std::to_string(event.seq) + " · " +
                                                     format_time(event.at))})}});
  return {{"text", notification_text(event)}, {"blocks", std::move(blocks)}};
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
  std::vector<std::string> kinds;  // failures first, then in order of first appearance
  for (const store::Event& e : events) {
    if (std::find(kinds.begin(), kinds.end(), e.kind) == kinds.end()) kinds.push_back(e.kind);
  }
  std::stable_partition(kinds.begin(), kinds.end(), [](const std::string& kind) { return is_failure_event(kind); });
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
  // One bullet per kind, compact, with where to read the events themselves.
  std::string list;
  for (std::size_t at = 0; at <= folded.message.size();) {
    const std::size_t end = std::min(folded.message.find("; ", at), folded.message.size());
    list += (list.empty() ? "" : "\n") + std::string("• ") + slack_escape(folded.message.substr(at, end - at));
    at = end + 2;
  }
  return {{"text", slack_escape(line)},
          {"blocks", Json::array({header(":rotating_light: Storm: " + std::to_string(folded.count) + " events folded"),
                                  section(list),
                                  {{"type", "context"},
                                   {"elements", Json::array({mrkdwn("events " + std::to_string(folded.first_seq) + "-" +
                                                                    std::to_string(folded.last_seq) + " in GET /v1/events")})}}})}};
}

store::Event sample_event(const std::vector<std::string>& subscribed, TimePoint now) {
  const auto subscribes = [&](const std::string& kind) {
    return std::any_of(subscribed.begin(), subscribed.end(), [&](const std::string& glob) { return glob_match(glob, kind); });
  };
  store::Event e;
  e.at = now;
  if (subscribes("node.down") && !subscribes("job.failed")) {
    e.kind = "node.down";
    e.severity = store::Severity::error;
    e.node = "sample-node";
    e.message = "(test) node sample-node is DOWN: sent no heartbeat for 30000 ms";
    e.details = {{"state", "DOWN"}, {"reason", "sent no heartbeat for 30000 ms"}};
    return e;
  }
  e.job_id = 0;
  e.attempt_id = 0;
  e.user = "sample-user";
  e.share = "sample-share";
  e.details = {{"name", "sample-job (test)"}, {"job_ref", "0"}, {"attempt", 1}, {"nodes", "sample-node"}, {"duration_s", 3725.0}};
  if (subscribes("job.succeeded") && !subscribes("job.failed")) {
    e.kind = "job.succeeded";
    e.message = "(test) job 0 succeeded after 1200 steps";
    e.details.update({{"exit_code", 0}, {"steps", 1200}});
    return e;
  }
  e.kind = "job.failed";
  e.severity = store::Severity::error;
  e.node = "sample-node";
  e.message = "(test) job 0 failed (oom): rank 0 on sample-node exited with code 1";
  e.details.update({{"class", "oom"},
                    {"suggestion", "The accelerator ran out of memory (RuntimeError: CUDA out of memory); lower the "
                                   "per-device batch size, use activation checkpointing, or shard the model over more devices."},
                    {"exit_code", 1},
                    {"node", "sample-node"},
                    {"infrastructure", false},
                    {"output", "step 1200 loss 2.31\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"}});
  return e;
}

}  // namespace trainyard::daemon
