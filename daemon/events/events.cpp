#include "daemon/events/events.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "daemon/base/attempt_outcome.h"
#include "daemon/base/audit.h"
#include "proto/errors.h"
#include "proto/flag_parser.h"
#include "proto/time.h"

namespace trainyard::daemon {
namespace {

struct TypeSeverity {
  std::string_view type;
  store::Severity severity;
};

// The one place that says how much each type matters: error asks a person to act now, warning to
// look soon (the system is already recovering), info is routine.
constexpr std::array kTypes = {
    TypeSeverity{"job.submitted", store::Severity::info},
    TypeSeverity{"job.started", store::Severity::info},
    TypeSeverity{"job.succeeded", store::Severity::info},
    TypeSeverity{"job.failed", store::Severity::error},
    TypeSeverity{"job.retrying", store::Severity::warning},
    TypeSeverity{"job.stuck", store::Severity::error},
    TypeSeverity{"job.cancelled", store::Severity::info},
    TypeSeverity{"node.registered", store::Severity::info},
    TypeSeverity{"node.down", store::Severity::error},
    TypeSeverity{"node.unhealthy", store::Severity::error},
    TypeSeverity{"node.suspect", store::Severity::warning},
    TypeSeverity{"node.healthy", store::Severity::info},
    TypeSeverity{"node.drained", store::Severity::warning},
    TypeSeverity{"node.undrained", store::Severity::info},
    TypeSeverity{"healthcheck.finished", store::Severity::info},
    TypeSeverity{"canary.failed", store::Severity::error},
    TypeSeverity{"canary.succeeded", store::Severity::info},
    TypeSeverity{"job.held", store::Severity::info},
    TypeSeverity{"job.released", store::Severity::info},
    TypeSeverity{"job.updated", store::Severity::info},
    TypeSeverity{"job.requeued", store::Severity::info},
    TypeSeverity{"job.preempted", store::Severity::warning},
    TypeSeverity{"job.waiting_on_preemption", store::Severity::info},
    TypeSeverity{"job.storage_over_quota", store::Severity::warning},
    TypeSeverity{"job.straggler", store::Severity::warning},
    TypeSeverity{"job.checkpoint_failed", store::Severity::warning},
    TypeSeverity{"store.recovered", store::Severity::warning},
};

bool is_audit(std::string_view kind) { return kind.starts_with(kAuditKindPrefix); }

// A message is one line: reasons can quote a log tail.
std::string first_line(std::string text) {
  if (auto end = text.find('\n'); end != std::string::npos) text.resize(end);
  return text;
}

store::Event base_event(TimePoint at, std::string kind, std::string node, std::string message, Json details) {
  store::Event e;
  e.at = at;
  e.severity = severity_of(kind);
  e.kind = std::move(kind);
  e.node = std::move(node);
  e.message = first_line(std::move(message));
  e.details = std::move(details);
  return e;
}

bool names_node(const std::string& nodes, std::string_view wanted) {
  std::string_view rest = nodes;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    if (rest.substr(0, comma) == wanted) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

bool matches_job_and_node(const EventFilter& filter, const store::Event& event) {
  if (filter.job && event.job_id != filter.job) return false;
  return !filter.node || names_node(event.node, *filter.node);
}

}  // namespace

const std::vector<std::string_view>& event_types() {
  static const std::vector<std::string_view> types = [] {
    std::vector<std::string_view> all;
    for (const auto& t : kTypes) all.push_back(t.type);
    return all;
  }();
  return types;
}

bool is_event_type(std::string_view kind) {
  return is_audit(kind) ||
         std::any_of(kTypes.begin(), kTypes.end(), [&](const TypeSeverity& t) { return t.type == kind; });
}

bool glob_matches_an_event_type(const std::string& glob) {
  return glob.starts_with(kAuditKindPrefix) || glob_match(glob, "audit.x") ||
         std::any_of(kTypes.begin(), kTypes.end(), [&](const TypeSeverity& t) { return glob_match(glob, std::string(t.type)); });
}

store::Severity severity_of(std::string_view kind) {
  for (const auto& t : kTypes) {
    if (t.type == kind) return t.severity;
  }
  return store::Severity::info;  // audit.*: a record of a deliberate change
}

store::Event job_event(TimePoint at, std::string kind, const Job& job, std::optional<AttemptId> attempt, std::string node,
                std::string message, Json details) {
  store::Event e = base_event(at, std::move(kind), std::move(node), std::move(message), std::move(details));
  e.job_id = job.id;
  e.attempt_id = attempt;
  e.user = job.user;
  e.share = job.spec.share;
  return e;
}

store::Event node_event(TimePoint at, std::string kind, std::string node, std::string message, Json details) {
  return base_event(at, std::move(kind), std::move(node), std::move(message), std::move(details));
}

namespace {

// What an operator does about a node that went into `state`: said in its event and alerts.
std::string node_state_suggestion(NodeState state, const std::string& node) {
  switch (state) {
    case NodeState::down:
      return "Its agent stopped answering: the jobs it ran are retried on other nodes. Look at the host and its "
             "agent's log; the node returns by itself when its agent reconnects and passes a check.";
    case NodeState::unhealthy:
      return "It failed a health check and takes no work: 'trainyard node " + node +
             "' names the check and the test that failed. Fix or replace what failed, then 'trainyard health run " +
             node + "': a passed check returns it.";
    case NodeState::suspect:
      return "It takes no new work while it is SUSPECT (its running jobs go on); 'trainyard node " + node +
             "' says why.";
    default:
      return "";
  }
}

}  // namespace

store::Event node_state_event(TimePoint at, std::string_view type, NodeState state, std::string node,
                              const std::string& reason) {
  std::string message = "node " + node + " is " + to_string(state) + ": " + reason;
  Json details = {{"state", to_string(state)}, {"reason", reason}};
  if (std::string suggestion = node_state_suggestion(state, node); !suggestion.empty()) details["suggestion"] = std::move(suggestion);
  return node_event(at, std::string(type), std::move(node), std::move(message), std::move(details));
}

bool matches(const EventFilter& filter, const store::Event& event) {
  // The audit log is its own feed (GET /v1/audit); a type filter that names audit.* brings it in.
  if (!filter.type) return !is_audit(event.kind) && matches_job_and_node(filter, event);
  if (!glob_match(*filter.type, event.kind)) return false;
  return matches_job_and_node(filter, event);
}

bool visible_to(const Principal& who, const store::Event& event) {
  if (is_audit(event.kind)) return who.may(Action::read_audit);  // as GET /v1/audit
  if (who.may(Action::read_all_jobs) || event.kind.starts_with("canary.")) return true;
  if (event.job_id) return event.user == who.user;
  return true;  // node, health check and canary events are the cluster's
}

std::string reader_key(const Principal& who, const EventFilter& filter) {
  std::string key;
  // Length-prefixed, so no user name or filter can spell another's key.
  const auto field = [&key](std::string_view value) { key += std::to_string(value.size()) + ":" + std::string(value); };
  field(who.may(Action::read_audit) ? "audit" : "");
  field(who.may(Action::read_all_jobs) ? "*" : who.user);
  field(filter.type ? "type=" + *filter.type : "");
  field(filter.job ? std::to_string(*filter.job) : "");
  field(filter.node ? "node=" + *filter.node : "");
  return key;
}

namespace {

constexpr std::size_t kMaxFilterChars = 128;

std::optional<std::string> query_text(const std::map<std::string, std::string>& query, const std::string& name) {
  auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  if (it->second.empty() || it->second.size() > kMaxFilterChars) {
    throw InvalidInput(name, "must be 1.." + std::to_string(kMaxFilterChars) + " characters");
  }
  return it->second;
}

bool is_glob_char(char c) { return std::islower(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '*' || c == '?'; }

}  // namespace

EventFilter parse_event_filter(const std::map<std::string, std::string>& query) {
  EventFilter filter;
  filter.type = query_text(query, "type");
  if (filter.type) {
    const std::string& glob = *filter.type;
    if (!std::all_of(glob.begin(), glob.end(), is_glob_char)) {
      throw InvalidInput("type", "an event type or a glob over types: a-z . _ * ? only (e.g. job.failed, node.*)");
    }
    if (!glob_matches_an_event_type(glob)) throw InvalidInput("type", "matches no event type: " + glob);
  }
  if (auto job = query_text(query, "job")) filter.job = parse_integer("job", *job, 1, INT64_MAX);
  filter.node = query_text(query, "node");
  return filter;
}

EventPage read_events(store::Store& store, const Principal& who, const EventFilter& filter, const EventWalk& walk, int limit,
                      int scan_budget) {
  const bool newest_first = walk.order == EventOrder::newest_first;
  EventPage page;
  std::int64_t cursor = walk.from;
  int scanned = 0;
  while (static_cast<int>(page.events.size()) < limit) {
    if (scanned >= scan_budget) return {std::move(page.events), cursor};
    const int want = std::min(1000, scan_budget - scanned);
    const std::vector<store::Event> batch = newest_first ? store.events_before(cursor, want) : store.events_after(cursor, want);
    for (const store::Event& e : batch) {
      ++scanned;
      const bool too_old = walk.since && e.at < *walk.since;
      // Read back, the log only gets older: the first event before `since` ends the walk.
      if (too_old && newest_first) return page;
      cursor = e.seq;
      if (!too_old && visible_to(who, e) && matches(filter, e)) {
        page.events.push_back(e);
        if (static_cast<int>(page.events.size()) == limit) return {std::move(page.events), cursor};
      }
    }
    if (static_cast<int>(batch.size()) < want) return page;  // the end of the log
  }
  return {std::move(page.events), cursor};
}

}  // namespace trainyard::daemon
