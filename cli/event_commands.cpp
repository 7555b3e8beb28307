// `trainyard events`: the event log (GET /v1/events), a page at a time, or followed live
// (GET /v1/events/stream; the loop is cli/event_follow.cpp).
#include <limits>

#include "cli/commands.h"
#include "cli/table.h"

namespace trainyard::cli {

std::vector<FlagSpec> ListEvents::flags() {
  return {{"--type", "GLOB", "only events whose type matches GLOB (job.failed, node.*)"},
          {"--job", "ID", "only events of job ID"},
          {"--node", "N", "only events naming node N"},
          {"--since", "WHEN", "only events at or after WHEN: 90s, 10m, 12h, 1d back, an RFC 3339 time or a date"},
          {"--last", "N", "the N newest events"},
          {"--after", "ID", "oldest first, from the event after ID on"},
          {"--limit", "N", "at most N events a page (the daemon's default page is 100)"},
          {"--cursor", "NEXT", "the next page: the cursor the previous page printed (give the same other flags)"},
          {"--follow", "", "print events as they happen until Ctrl-C"}};
}

ListEvents ListEvents::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  ListEvents list;
  list.type = args.opt_string("--type");
  if (auto job = args.opt_string("--job")) list.job = parse_job_id(*job, "--job");
  list.node = args.opt_string("--node");
  list.after = args.opt_integer("--after", 0, std::numeric_limits<std::int64_t>::max());
  list.since = time_bound(args, "--since");
  list.limit = args.opt_integer("--limit", 1, 1000);
  const std::optional<std::int64_t> last = args.opt_integer("--last", 1, 1000);
  list.cursor = args.opt_string("--cursor");
  list.follow = args.has("--follow");
  if (last && list.limit) throw InvalidInput("--last", "is a page of the newest N; leave out --limit or --last");
  if (last && list.after) throw InvalidInput("--last", "reads the newest events; --after reads from an event on");
  if (last && list.cursor) throw InvalidInput("--last", "is one page; leave out --cursor or --last");
  if (last) list.limit = last;
  if (list.follow && list.limit)
    throw InvalidInput(last ? "--last" : "--limit", "a followed stream has no pages; leave it out or leave out --follow");
  if (list.follow && list.since)
    throw InvalidInput("--since", "a followed stream starts at the newest event (or --after ID); leave out --since");
  if (list.follow && list.cursor)
    throw InvalidInput("--cursor", "a followed stream has no pages; leave out --cursor or --follow");
  return list;
}

std::vector<ApiRequest> ListEvents::requests(const InputReader&) const {
  auto number = [](const auto& value) { return value ? std::optional(std::to_string(*value)) : std::nullopt; };
  Target target("/v1/events");
  // Newest first, like the dashboard's feed, unless a walk from an event on was asked for.
  target.param("order", after ? std::nullopt : std::optional<std::string>("newest"));
  target.param("type", type).param("job", number(job)).param("node", node).param("after", number(after));
  target.param("since", since).param("limit", number(limit)).param("cursor", cursor);
  return {{"GET", target.str(), std::nullopt}};
}

ApiRequest ListEvents::stream_request() const {
  Target target("/v1/events/stream");
  target.param("type", type)
      .param("job", job ? std::optional(std::to_string(*job)) : std::nullopt)
      .param("node", node)
      .param("after", after ? std::optional(std::to_string(*after)) : std::nullopt);
  return {"GET", target.str(), std::nullopt};
}

std::string ListEvents::render_line(const Json& e) {
  std::string line =
      text_of(e, "id") + "  " + text_of(e, "time") + "  " + text_of(e, "severity") + "  " + text_of(e, "type");
  for (const char* key : {"job", "node", "user"}) {
    if (const std::string value = text_of(e, key); value != kAbsent) line += std::string("  ") + key + "=" + value;
  }
  return line + "  " + text_of(e, "message") + "\n";
}

std::string ListEvents::render(const Replies& replies, const RenderContext&) const {
  Table t({"ID", "TIME", "TYPE", "SEVERITY", "JOB", "NODE", "USER", "MESSAGE"});
  const Json& events = field_or_null(replies.at(0), "events");
  if (events.is_array()) {
    for (const Json& e : events) {
      t.add_row({text_of(e, "id"), text_of(e, "time"), text_of(e, "type"), text_of(e, "severity"), text_of(e, "job"),
                 text_of(e, "node"), text_of(e, "user"), text_of(e, "message")});
    }
  }
  const Json& next = field_or_null(replies.at(0), "next");
  const std::string more = after ? "next page" : "older events";
  return t.str() + (next.is_string() ? more + ": --cursor " + next.get<std::string>() + "\n" : "");
}

}  // namespace trainyard::cli
