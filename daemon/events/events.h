#pragma once
// The events contract (docs/DESIGN.md "Events"): the types a person
// is told about, how much each matters (one table), how an event is built from the job or node it
// concerns, its JSON, and who may read it. Pure: no store, no clock; GET /v1/events, its stream
// and the webhooks read events only through these.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/base/auth.h"
#include "daemon/events/event_json.h"
#include "proto/job.h"
#include "proto/node.h"
#include "store/store.h"

namespace trainyard::daemon {

// Every type of the contract but audit.*, whose actions are open-ended ("audit.token.created").
const std::vector<std::string_view>& event_types();
// A contract type or an audit action.
bool is_event_type(std::string_view kind);
// Whether a type glob (glob_match, attempt_outcome.h) matches a contract type or reaches into
// audit.*, whose future actions it names too.
bool glob_matches_an_event_type(const std::string& glob);
store::Severity severity_of(std::string_view kind);

// An event about a job: its owner and share filled in, the message cut to its first line.
store::Event job_event(TimePoint at, std::string kind, const Job& job, std::optional<AttemptId> attempt, std::string node,
                std::string message, Json details = Json::object());
// An event about a node (no job, no user).
store::Event node_event(TimePoint at, std::string kind, std::string node, std::string message, Json details = Json::object());
// node.down, node.unhealthy, node.suspect, node.healthy or node.drained: the node entered `state`.
// `type` is the node lifecycle's for the change (daemon/policy/lifecycle.h): node.down, node.suspect, ...
store::Event node_state_event(TimePoint at, std::string_view type, NodeState state, std::string node,
                              const std::string& reason);

// The filters GET /v1/events and its stream share. Without a type, audit.* events are left out:
// they have their own feed (GET /v1/audit), and a type glob naming them brings them in.
struct EventFilter {
  std::optional<std::string> type;  // a glob over the type (glob_match, attempt_outcome.h)
  std::optional<JobId> job;
  std::optional<std::string> node;  // one of the event's nodes (a job event may name several)
};
bool matches(const EventFilter& filter, const store::Event& event);

// Roles that read every job read every event (audit too when they may read the audit log); others
// read the events of their own jobs and the cluster's node, health check and canary events.
bool visible_to(const Principal& who, const store::Event& event);
// All that visible_to and matches look at: readers with equal keys read the same events (so a
// stream's batch is selected once for all of them).
std::string reader_key(const Principal& who, const EventFilter& filter);


// The filters of GET /v1/events and its stream from the query (type, job, node); throws
// InvalidInput naming the parameter: over-long, bad characters, or a type glob no type matches.
EventFilter parse_event_filter(const std::map<std::string, std::string>& query);

// Where a read of the log starts and which way it goes.
enum class EventOrder { oldest_first, newest_first };
struct EventWalk {
  EventOrder order = EventOrder::oldest_first;
  // Oldest first: events after this id. Newest first: events before it (INT64_MAX: from the newest).
  std::int64_t from = 0;
  std::optional<TimePoint> since;  // only events at or after this time
};

// One page of what `who` may read along `walk`. Scans at most `scan_budget` stored events, so a
// filter matching little cannot make one request read the whole log: `next` is where to continue
// (the last event scanned) when more may follow, nullopt at the end of the log (or, newest first,
// at the first event before `since`).
struct EventPage {
  std::vector<store::Event> events;
  std::optional<std::int64_t> next;
};
EventPage read_events(store::Store& store, const Principal& who, const EventFilter& filter, const EventWalk& walk, int limit,
                      int scan_budget = 10'000);

}  // namespace trainyard::daemon
