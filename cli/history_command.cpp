// `trainyard history`: finished jobs with their accounting (GET /v1/jobs), like sacct.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cli/commands.h"
#include "cli/history.h"
#include "cli/table.h"
#include "proto/state_list.h"
#include "proto/time_window.h"

namespace trainyard::cli {
namespace {

const Json& accounting(const Json& job) { return field_or_null(job, "accounting"); }

std::string elapsed_of(const Json& object, std::string_view key) {
  const Json& seconds = field_or_null(object, key);
  return seconds.is_number() ? format_elapsed(seconds.get<double>()) : std::string(kAbsent);
}

std::string formatted_number(const Json& number, const char* format, double scale = 1) {
  if (!number.is_number()) return std::string(kAbsent);
  char buf[64];
  std::snprintf(buf, sizeof buf, format, number.get<double>() * scale);
  return buf;
}

}  // namespace

const std::vector<HistoryColumn>& history_columns() {
  static const std::vector<HistoryColumn> all = {
      {"id", "ID", [](const Json& j) { return id_cell(j); }},
      {"name", "NAME", [](const Json& j) { return text_of(j, "name"); }},
      {"user", "USER", [](const Json& j) { return text_of(j, "user"); }},
      {"share", "SHARE", [](const Json& j) { return text_of(j, "share"); }},
      {"state", "STATE", [](const Json& j) {
         // An array whose tasks ended differently is summed up by its tasks, not by its worst one.
         const Json& array = field_or_null(j, "array");
         const Json& counts = field_or_null(array, "counts");
         return counts.is_object() && counts.size() > 1 ? task_counts(array) : text_of(j, "state");
       }},
      {"submitted", "SUBMITTED", [](const Json& j) { return text_of(j, "submitted_at"); }},
      {"started", "STARTED", [](const Json& j) { return text_of(j, "started_at"); }},
      {"ended", "ENDED", [](const Json& j) { return text_of(j, "ended_at"); }},
      {"elapsed", "ELAPSED", [](const Json& j) { return elapsed_of(accounting(j), "elapsed_s"); }},
      {"wait", "WAIT", [](const Json& j) { return elapsed_of(accounting(j), "wait_s"); }},
      {"nodes", "NODES", [](const Json& j) { return text_of(accounting(j), "nodes"); }},
      {"cores", "CORES", [](const Json& j) { return text_of(accounting(j), "cores"); }},
      {"corehours", "CORE_HOURS",
       [](const Json& j) { return formatted_number(field_or_null(accounting(j), "core_hours"), "%.2f"); }},
      {"exit", "EXIT", [](const Json& j) { return text_of(j, "exit_code"); }},
      {"class", "CLASS",
       [](const Json& j) {
         const std::string c = text_of(j, "failure_class");
         return c.empty() ? std::string(kAbsent) : c;
       }},
      {"attempts", "ATTEMPTS", [](const Json& j) {
         return j.contains("attempts") ? std::to_string(attempts_run(j)) : std::string(kAbsent);
       }},
      {"goodput", "GOODPUT",
       [](const Json& j) { return formatted_number(field_or_null(accounting(j), "goodput"), "%.1f%%", 100); }},
      {"reason", "REASON", [](const Json& j) { return text_of(j, "reason"); }},
  };
  return all;
}

namespace {

const HistoryColumn& column_named(std::string_view name) {
  return *std::find_if(history_columns().begin(), history_columns().end(),
                       [&](const HistoryColumn& c) { return c.name == name; });
}

std::string column_names() {
  std::string names;
  for (const auto& c : history_columns()) names += (names.empty() ? "" : ",") + std::string(c.name);
  return names;
}

std::vector<std::string> row_of(const Json& job, const std::vector<std::string>& names) {
  std::vector<std::string> cells;
  for (const auto& name : names) cells.push_back(column_named(name).cell(job));
  return cells;
}

}  // namespace

// Checks the text now, for the error to name the flag; the daemon reads it against its own clock.
std::optional<std::string> time_bound(const ParsedArgs& args, std::string_view flag) {
  auto text = args.opt_string(flag);
  if (text) parse_time_bound(*text, TimePoint{}, flag);
  return text;
}

std::vector<std::string> parse_history_columns(std::string_view text) {
  std::vector<std::string> names;
  for (;;) {
    const auto comma = text.find(',');
    const std::string name(text.substr(0, comma));
    const bool known = std::any_of(history_columns().begin(), history_columns().end(),
                                   [&](const HistoryColumn& c) { return c.name == name; });
    if (!known) throw InvalidInput("--format", "unknown column \"" + name + "\" (columns: " + column_names() + ")");
    names.push_back(name);
    if (comma == std::string_view::npos) return names;
    text.remove_prefix(comma + 1);
  }
}

std::string format_elapsed(double seconds) {
  const auto total = static_cast<std::int64_t>(std::max(0.0, std::floor(seconds)));
  const std::int64_t days = total / 86400, h = total / 3600 % 24, m = total / 60 % 60, s = total % 60;
  char buf[64];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days), static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(h), static_cast<long long>(m),
                  static_cast<long long>(s));
  }
  return buf;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string history_table(const Json& jobs, const std::vector<std::string>& names) {
  std::vector<std::string> headers;
  for (const auto& name : names) headers.emplace_back(column_named(name).header);
  Table t(std::move(headers));
  if (jobs.is_array()) {
    for (const Json& job : jobs) t.add_row(row_of(job, names));
  }
  return t.str();
}

std::string history_csv(const Json& jobs, const std::vector<std::string>& names) {
  const auto line = [](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out += ',';
      out += csv_field(cells[i]);
    }
    return out + "\n";
  };
  std::string out = line(names);
  if (jobs.is_array()) {
    for (const Json& job : jobs) out += line(row_of(job, names));
  }
  return out;
}

// ---- history ----

std::vector<FlagSpec> ShowHistory::flags() {
  static const std::string format_help =
      "columns, comma-separated, of: " + column_names() + " (default " + std::string(kDefaultHistoryColumns) + ")";
  return {{"--since", "WHEN", "jobs submitted at or after WHEN: 90s, 45m, 12h, 1d back, an RFC 3339 time or a date"},
          {"--until", "WHEN", "jobs submitted before WHEN (same forms)"},
          {"--state", "S[,S]", "only jobs in these states (default SUCCEEDED,FAILED,CANCELLED)"},
          {"--user", "U", "only jobs of user U"},
          {"--share", "S", "only jobs of fair-share S"},
          {"--limit", "N", "at most N jobs, 1..1000 (default 100)"},
          {"--before", "ID", "only jobs older than job ID"},
          {"--array", "ID", "the tasks of array job ID, one row each (without it an array is one row)"},
          {"--cursor", "NEXT", "the next page: the cursor the previous page printed (give the same other flags)"},
          {"--format", "COLUMNS", format_help},
          {"--csv", "", "print CSV (a header line, then one line per job)"}};
}

ShowHistory ShowHistory::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  ShowHistory h;
  h.since = time_bound(args, "--since");
  h.until = time_bound(args, "--until");
  if (auto states = args.opt_string("--state")) h.states = job_states_text(parse_job_states("--state", *states));
  h.user = args.opt_string("--user");
  h.share = args.opt_string("--share");
  h.limit = args.opt_integer("--limit", 1, 1000);
  if (auto before = args.opt_string("--before")) h.before = parse_job_id(*before, "--before");
  if (auto array = args.opt_string("--array")) h.array = parse_job_id(*array, "--array");
  h.cursor = args.opt_string("--cursor");
  h.columns = parse_history_columns(args.opt_string("--format").value_or(std::string(kDefaultHistoryColumns)));
  h.csv = args.has("--csv");
  return h;
}

std::vector<ApiRequest> ShowHistory::requests(const InputReader&) const {
  const auto text = [](const std::optional<std::int64_t>& v) {
    return v ? std::optional(std::to_string(*v)) : std::nullopt;
  };
  Target target("/v1/jobs");
  target.param("state", states)
      .param("since", since)
      .param("until", until)
      .param("user", user)
      .param("share", share)
      .param("limit", text(limit))
      .param("before", text(before))
      .param("array", text(array))
      .param("cursor", cursor);
  return {{"GET", target.str(), std::nullopt}};
}

std::string ShowHistory::render(const Replies& replies, const RenderContext&) const {
  const Json& jobs = field_or_null(replies.at(0), "jobs");
  return csv ? history_csv(jobs, columns) : history_table(jobs, columns);
}

Notices ShowHistory::notices(const Replies& replies) const {
  const Json& next = field_or_null(replies.at(0), "next");
  if (!next.is_string()) return {};
  return {{"more jobs match: add --cursor " + next.get<std::string>() + " for the next page"}};
}

}  // namespace trainyard::cli
