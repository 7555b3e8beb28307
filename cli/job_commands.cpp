// The job commands: wait, jobs, job (and its provenance), diff, logs, cancel (submit: submit_command.cpp).
#include <algorithm>
#include <cmath>

#include <cstdio>

#include "cli/commands.h"
#include "cli/follow.h"
#include "cli/provenance_diff.h"
#include "cli/table.h"
#include "cli/time_limit.h"
#include "proto/state_list.h"
#include "proto/messages.h"
#include "proto/time_window.h"

namespace trainyard::cli {
namespace {

constexpr std::size_t kReasonWidth = 60;
constexpr std::int64_t kMaxWaitS = 366LL * 86400;

// Why a job is where it is: the scheduler's pending reason while queued (squeue's "(Resources)"),
// else the job's last reason.
std::string reason_cell(const Json& job) {
  const Json& pending = field_or_null(job, "pending_reason");
  if (pending.is_object()) return text_of(pending, "code");
  const std::string reason = text_of(job, "reason");
  return truncate(reason == kAbsent ? "" : reason, kReasonWidth);
}

std::string time_with_age(const Json& object, std::string_view key, TimePoint now) {
  const std::string when = text_of(object, key);
  const std::string age = age_of(object, key, now);
  return age == kAbsent ? when : when + " (" + age + " ago)";
}

// How long an attempt ran: from its start to its end, or to `now` while it runs.
std::string runtime_of(const Json& attempt, TimePoint now) {
  const Json& started = field_or_null(attempt, "started_at");
  if (!started.is_string()) return std::string(kAbsent);
  const auto start = parse_time(started.get<std::string>());
  const Json& ended = field_or_null(attempt, "ended_at");
  const auto end = ended.is_string() ? parse_time(ended.get<std::string>()) : std::optional<TimePoint>(now);
  return start && end ? format_age(*end - *start) : std::string(kAbsent);
}

// The program and its arguments separated by spaces, as a user would type them (unquoted).
std::string argv_text(const Json& command) {
  const Json& argv = field_or_null(command, "argv");
  if (!argv.is_array()) return std::string(kAbsent);
  std::string out;
  for (const Json& arg : argv) {
    if (!out.empty()) out += ' ';  // not `" " + ...`: g++ 12 warns -Wrestrict on that at -O3
    out += arg.is_string() ? arg.get<std::string>() : arg.dump();
  }
  return out;
}

std::string goodput_text(const Json& g) {
  if (!field_or_null(g, "goodput").is_number()) {
    const Json& note = field_or_null(g, "goodput_note");
    return note.is_string() ? note.get<std::string>() : std::string("n/a");
  }
  const Json& lost = field_or_null(g, "lost_core_s");
  const auto num = [&](const Json& o, const char* key) {
    const Json& v = field_or_null(o, key);
    return v.is_number() ? v.get<double>() : 0.0;
  };
  const double allocated = num(g, "allocated_core_s");
  // Whole core-seconds would show a short job's losses as zeros beside a goodput well under 100%.
  const int digits = allocated < 100 ? 1 : 0;
  char buf[320];
  int length = std::snprintf(
      buf, sizeof buf,
      "%.1f%% of %.*f core-s (lost: pre-flight %.*f, restart %.*f, checkpoint %.*f, redone %.*f, "
      "stalled %.*f",
      100.0 * num(g, "goodput"), digits, allocated, digits, num(lost, "preflight"), digits, num(lost, "restart"),
      digits, num(lost, "checkpoint"), digits, num(lost, "redone"), digits, num(lost, "stalled"));
  const double other = num(lost, "other");
  if (std::abs(other) >= (digits == 1 ? 0.05 : 0.5)) {
    length += std::snprintf(buf + length, sizeof buf - static_cast<std::size_t>(length), ", other %.*f", digits, other);
  }
  return std::string(buf, static_cast<std::size_t>(length)) + " core-s)";
}

// How many attempts ran and, when not all of them counted against the job's retries, why: a
// requeue or a preemption is not the job's failure, nor is a node's (an infrastructure retry).
std::int64_t count_of(const Json& job, const char* key) {
  const Json& v = field_or_null(job, key);
  return v.is_number_integer() ? v.get<std::int64_t>() : 0;
}

std::string attempts_text(const Json& job) {
  const std::int64_t counted = count_of(job, "attempts"), infra = count_of(job, "infra_retries"),
                     requeues = count_of(job, "requeues");
  if (infra == 0 && requeues == 0) return text_of(job, "attempts");
  std::string text = std::to_string(attempts_run(job)) + " (" + std::to_string(counted) + " counted against its retries";
  if (requeues > 0) text += ", " + std::to_string(requeues) + " requeued or preempted";
  if (infra > 0) text += ", " + std::to_string(infra) + " retried for a node's fault";
  return text + ")";
}

// A task's place in its array: "task 3 of array 9 (4 tasks)".
std::string array_task_text(const Json& array) {
  return "task " + text_of(array, "task_id") + " of array " + text_of(array, "job_id") + " (" +
         text_of(array, "task_count") + " tasks)";
}

// What `job ID` of an array shows before its task 0: the whole array, its tasks counted by state.
std::string array_summary(const Json& job) {
  const Json& tasks = field_or_null(job, "array_tasks");
  if (!tasks.is_object()) return "";
  const Json& array = field_or_null(job, "array");
  Description d;
  d.add("Array", text_of(array, "job_id") + "_[" + text_of(field_or_null(job, "spec"), "array") + "]");
  d.add("State", text_of(tasks, "state"));
  d.add("Tasks", text_of(array, "task_count") + ": " + task_counts(tasks));
  return d.str() + "\nTask " + text_of(array, "task_id") + " (" + id_cell(job) + "):\n";
}

// sbatch's spelling of the job's dependencies: "afterok:7,afterany:9".
std::string dependencies_text(const Json& spec) {
  const Json& deps = field_or_null(spec, "depends_on");
  if (!deps.is_array() || deps.empty()) return "none";
  std::string out;
  for (const Json& d : deps) out += (out.empty() ? "" : ",") + text_of(d, "condition") + ":" + text_of(d, "job");
  return out;
}

std::string time_limit_text(const Json& spec) {
  const Json& limit = field_or_null(spec, "timeout_s");
  if (!limit.is_number_integer()) return "none";
  return format_time_limit(limit.get<std::int64_t>()) + " (" + limit.dump() + " s)";
}

std::string memory_text(const Json& spec) {
  const Json& memory = field_or_null(spec, "memory_mb");
  if (!memory.is_number_integer()) return "no limit of its own";
  return memory.dump() + " MiB per node";
}

bool has_ended(const Json& job) {
  const std::string state = text_of(job, "state");
  return state == "SUCCEEDED" || state == "FAILED" || state == "CANCELLED";
}

// While a later attempt is queued or runs, the job's exit fields are its previous attempt's.
std::string previous_attempt_text(const Json& job) {
  std::string out;
  if (const std::string code = text_of(job, "exit_code"); code != kAbsent) out = "exit code " + code;
  if (const std::string cls = text_of(job, "failure_class"); cls != kAbsent && !cls.empty()) {
    out += (out.empty() ? "" : ", ") + cls;
  }
  return out;
}

std::string describe_job(const Json& job, TimePoint now) {
  const Json& spec = field_or_null(job, "spec");
  Description d;
  const Json& array = field_or_null(job, "array");
  d.add("ID", array.is_object() ? id_cell(job) + " (job id " + text_of(job, "id") + ")" : text_of(job, "id"));
  if (array.is_object()) d.add("Array", array_task_text(array));
  d.add("Name", text_of(job, "name"));
  d.add("User", text_of(job, "user"));
  d.add("Share", text_of(job, "share"));
  d.add("Priority", text_of(spec, "priority"));
  d.add("State", text_of(job, "state"));
  const Json& pending = field_or_null(job, "pending_reason");
  if (pending.is_object()) d.add("Pending reason", text_of(pending, "code") + ": " + text_of(pending, "message"));
  if (job.contains("queue_position")) d.add("Queue position", text_of(job, "queue_position"));
  const std::string placed = list_of(job, "nodes");
  d.add("Nodes", text_of(spec, "nodes") + (placed == kAbsent ? "" : " (" + placed + ")"));
  d.add("Cores per node", spec.contains("cores_per_node") ? text_of(spec, "cores_per_node") : "whole node");
  d.add("Kind", text_of(spec, "kind"));
  const Json& command = field_or_null(spec, "command");
  if (command.is_object()) {
    d.add("Command", argv_text(command));
    d.add("Procs per node", command.contains("procs_per_node") ? text_of(command, "procs_per_node") : "1");
    d.add("Working directory", command.contains("workdir") ? text_of(command, "workdir") : "the attempt's own");
    if (const Json& script = field_or_null(command, "script"); script.is_string()) {
      const auto lines = std::count(script.get_ref<const std::string&>().begin(), script.get_ref<const std::string&>().end(), '\n');
      d.add("Batch script", std::to_string(lines) + " lines, run as the Command");
    }
    // As scontrol's StdOut/StdErr: where a copy of the output goes besides the job's logs.
    if (command.contains("output")) d.add("Output file", text_of(command, "output"));
    if (command.contains("error")) d.add("Error file", text_of(command, "error"));
  }
  d.add("Time limit", time_limit_text(spec));
  d.add("Memory", memory_text(spec));
  d.add("Dependencies", dependencies_text(spec));
  d.add("Submitted", time_with_age(job, "submitted_at", now));
  d.add("Started", time_with_age(job, "started_at", now));
  d.add("Ended", time_with_age(job, "ended_at", now));
  d.add("Attempts", attempts_text(job));
  d.add("Avoided nodes", list_of(job, "excluded_nodes"));  // nodes that failed it: its next attempts go elsewhere
  if (has_ended(job)) {
    d.add("Exit code", text_of(job, "exit_code"));
    d.add("Reason", text_of(job, "reason"));
    d.add("Failure class", text_of(job, "failure_class"));
    if (const std::string suggestion = text_of(job, "suggestion"); !suggestion.empty() && suggestion != kAbsent) {
      d.add("Suggestion", suggestion);
    }
  } else {
    // The pending reason says why it waits; an earlier attempt's end stays in the attempts below.
    if (!pending.is_object()) d.add("Reason", text_of(job, "reason"));
    if (const std::string previous = previous_attempt_text(job); !previous.empty()) d.add("Previous attempt", previous);
  }
  d.add("Cancel requested", text_of(job, "cancel_requested"));
  const Json& goodput = field_or_null(job, "goodput");
  if (goodput.is_object()) d.add("Goodput", goodput_text(goodput));
  if (const std::string unreadable = text_of(job, "store_unreadable"); unreadable != kAbsent) d.add("Store", unreadable);
  return d.str();
}

// An attempt's class, marked "[infra]" when the system was at fault (it used none of the job's attempts).
std::string attempt_class(const Json& attempt) {
  const Json& infra = field_or_null(attempt, "infrastructure");
  return text_of(attempt, "failure_class") + (infra.is_boolean() && infra.get<bool>() ? "[infra]" : "");
}

std::string attempts_table(const Json& attempts, TimePoint now) {
  Table t({"ATTEMPT", "ID", "STATE", "NODES", "EXIT", "SIGNAL", "CLASS", "STEPS", "STARTED", "RUNTIME", "REASON"});
  for (const Json& a : attempts) {
    t.add_row({text_of(a, "number"), text_of(a, "id"), text_of(a, "state"), list_of(a, "nodes"),
               text_of(a, "exit_code"), text_of(a, "signal"), attempt_class(a),
               text_of(a, "steps_completed"), age_of(a, "started_at", now), runtime_of(a, now),
               truncate(text_of(a, "reason"), kReasonWidth)});
  }
  return t.str();
}

std::vector<FlagSpec> with_watch_flags(std::vector<FlagSpec> flags) {
  for (FlagSpec& flag : watch_flags()) flags.push_back(std::move(flag));
  return flags;
}

std::string ensure_final_newline(std::string text) {
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

}  // namespace

std::string task_counts(const Json& array) {
  std::string out;
  for (const auto& [state, n] : field_or_null(array, "counts").items()) {
    out += (out.empty() ? "" : ", ") + n.dump() + " " + state;
  }
  return out;
}

std::int64_t attempts_run(const Json& job) {
  return count_of(job, "attempts") + count_of(job, "infra_retries") + count_of(job, "requeues");
}

std::string id_cell(const Json& job) {
  const Json& array = field_or_null(job, "array");
  if (!array.is_object()) return text_of(job, "id");
  if (array.contains("counts"))
    return text_of(array, "job_id") + "_[" + text_of(field_or_null(job, "spec"), "array") + "]";
  return text_of(array, "job_id") + "_" + text_of(array, "task_id");
}

// ---- wait ----

std::vector<FlagSpec> WaitJobs::flags() {
  return {{"--for", "ended|succeeded", "what to wait for: every job's end (default), or every job's success"},
          {"--timeout", "T", "give up after T: 90s, 45m, 12h, 2d, or seconds (exit 124)"}};
}

WaitJobs WaitJobs::parse(const ParsedArgs& args) {
  if (args.positionals.empty()) {
    throw InvalidInput("ID", "is required: the jobs to wait for (ID or ID_N, several allowed)");
  }
  WaitJobs wait;
  for (const std::string& id : args.positionals) wait.jobs.push_back(parse_job_target(id));
  if (auto condition = args.opt_string("--for")) {
    if (*condition != "ended" && *condition != "succeeded") {
      throw InvalidInput("--for", "must be ended or succeeded, got \"" + *condition + "\"");
    }
    wait.until_succeeded = *condition == "succeeded";
  }
  if (auto timeout = args.opt_string("--timeout")) wait.timeout_s = parse_duration_s(*timeout, "--timeout", kMaxWaitS);
  return wait;
}

std::vector<ApiRequest> WaitJobs::requests(const InputReader&) const {
  std::vector<ApiRequest> requests;
  for (const JobTarget& job : jobs) requests.push_back({"GET", job.path(), std::nullopt});
  return requests;
}

std::string WaitJobs::render(const Replies& replies, const RenderContext&) const {
  std::string out;
  for (const Json& ended : replies) out += ended_line(ended);
  return out;
}

// ---- jobs ----

std::vector<FlagSpec> ListJobs::flags() {
  return with_watch_flags(
      {{"--state", "S", "only jobs in these states, comma-separated (PENDING, STARTING, RUNNING, SUCCEEDED, FAILED, CANCELLED)",
        false, {"-t", "--states"}},
       {"--all", "", "jobs in every state, ended ones too (default: PENDING, STARTING and RUNNING only)"},
       {"--share", "S", "only jobs of fair-share S"},
       {"--user", "U", "only jobs of user U", false, {"-u"}},
       {"--limit", "N", "at most N jobs (the daemon's default page is 100)"},
       {"--before", "ID", "only jobs older than job ID (the next page)"},
       {"--array", "ID", "the tasks of array job ID, one row each"},
       {"--cursor", "NEXT", "the next page: the cursor the previous page printed (give the same other flags)"}});
}

ListJobs ListJobs::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  ListJobs list;
  if (auto states = args.opt_string("--state")) {
    if (args.has("--all")) throw InvalidInput("--all", "give either --all or --state, not both");
    list.states = parse_job_states("--state", *states);
  }
  list.share = args.opt_string("--share");
  list.user = args.opt_string("--user");
  list.limit = args.opt_integer("--limit", 1, kAnyInt);
  if (auto before = args.opt_string("--before")) list.before = parse_job_id(*before, "--before");
  if (auto array = args.opt_string("--array")) list.array = parse_job_id(*array, "--array");
  list.cursor = args.opt_string("--cursor");
  list.watch_s = parse_watch(args);
  if (!args.has("--all") && !args.has("--state") && !list.array) list.states = active_job_states();
  return list;
}

std::vector<ApiRequest> ListJobs::requests(const InputReader&) const {
  Target target("/v1/jobs");
  target.param("state", states.empty() ? std::nullopt : std::optional(job_states_text(states)))
      .param("share", share)
      .param("user", user)
      .param("limit", limit ? std::optional(std::to_string(*limit)) : std::nullopt)
      .param("before", before ? std::optional(std::to_string(*before)) : std::nullopt)
      .param("array", array ? std::optional(std::to_string(*array)) : std::nullopt)
      .param("cursor", cursor);
  return {{"GET", target.str(), std::nullopt}};
}

std::string ListJobs::render(const Replies& replies, const RenderContext& ctx) const {
  Table t({"ID", "NAME", "USER", "SHARE", "STATE", "POS", "NODES", "ATTEMPTS", "AGE", "REASON"});
  const Json& jobs = field_or_null(replies.at(0), "jobs");
  if (jobs.is_array()) {
    for (const Json& job : jobs) {
      const Json& array = field_or_null(job, "array");
      const bool folded = array.is_object() && array.contains("counts");
      t.add_row({id_cell(job), text_of(job, "name"), text_of(job, "user"), text_of(job, "share"),
                 text_of(job, "state"), text_of(job, "queue_position"), text_of(field_or_null(job, "spec"), "nodes"),
                 folded || !job.contains("attempts") ? std::string(kAbsent) : std::to_string(attempts_run(job)),
                 age_of(job, "submitted_at", ctx.now),
                 folded ? task_counts(array) : reason_cell(job)});
    }
  }
  std::string out = t.str();
  if ((!jobs.is_array() || jobs.empty()) && states == active_job_states()) out += "(no pending or running jobs; --all lists ended ones too)\n";
  const Json& next = field_or_null(replies.at(0), "next");
  if (next.is_string()) out += "(more jobs match: add --cursor " + next.get<std::string>() + " for the next page)\n";
  if (const std::string unreadable = text_of(replies.at(0), "store_unreadable"); unreadable != kAbsent) {
    out += "(the daemon's store could not be read: " + unreadable + ")\n";
  }
  return out;
}

// ---- job ----

std::vector<FlagSpec> ShowJob::flags() {
  return with_watch_flags(
      {{"--provenance", "", "what an attempt depended on: versions, spec, checkpoint, nodes, environment, its facts"},
       {"--attempt", "N", "with --provenance: attempt number N (default: the latest)"}});
}

ShowJob ShowJob::parse(const ParsedArgs& args) {
  ShowJob show{parse_job_target(only_positional(args, "ID")), args.has("--provenance"),
               args.opt_integer("--attempt", 1, kAnyInt), parse_watch(args)};
  if (show.attempt && !show.provenance) throw InvalidInput("--attempt", "is only for --provenance");
  return show;
}

std::vector<ApiRequest> ShowJob::requests(const InputReader&) const {
  if (provenance) return {provenance_request({job, attempt})};
  return {{"GET", job.path(), std::nullopt}, {"GET", job.path() + "/attempts", std::nullopt}};
}

namespace {

// A failed attempt's last output lines as the daemon quoted them, under a line naming the rank and node.
// "Stragglers of attempt 2: rank 1 on trn-3 at 2.9x the others' median time per step".
std::string stragglers_line(const Json& attempt) {
  const Json& stragglers = field_or_null(attempt, "stragglers");
  if (!stragglers.is_array() || stragglers.empty()) return "";
  std::string out = "\nStragglers of attempt " + text_of(attempt, "number") + ":";
  for (const Json& s : stragglers) {
    out += " rank " + text_of(s, "rank") + " on " + text_of(s, "node") + " at " + number_of(s, "ratio", 2) +
           "x the others' median time per step;";
  }
  out.back() = '\n';
  return out;
}

// "Checkpoints of attempt 2: 3 writes failed, the last with: ...: Permission denied".
std::string checkpoint_failures_line(const Json& attempt) {
  const Json& failures = field_or_null(attempt, "checkpoint_failures");
  if (!failures.is_object()) return "";
  const std::string count = text_of(failures, "count");
  return "\nCheckpoints of attempt " + text_of(attempt, "number") + ": " + count +
         (count == "1" ? " write" : " writes") + " failed, the last with: " + text_of(failures, "last_error") + "\n";
}

std::string quoted_output(const Json& attempt) {
  const std::string output = text_of(attempt, "output");
  if (output == kAbsent) return "";
  std::string where;
  const Json& rank = field_or_null(attempt, "output_rank");
  const Json& nodes = field_or_null(attempt, "nodes");
  if (rank.is_number_integer()) {
    const auto r = rank.get<std::int64_t>();
    where = " (rank " + std::to_string(r);
    if (nodes.is_array() && r >= 0 && r < static_cast<std::int64_t>(nodes.size()) && nodes[r].is_string()) {
      where += " on " + nodes[r].get<std::string>();
    }
    where += ")";
  }
  std::string out = "\nLast output of attempt " + text_of(attempt, "number") + where + ":\n";
  std::string_view rest = output;
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    out += "  " + std::string(rest.substr(0, newline)) + "\n";
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }
  return out;
}

}  // namespace

std::string ShowJob::render(const Replies& replies, const RenderContext& ctx) const {
  if (provenance) return render_record(replies.at(0));
  const Json& attempts = field_or_null(replies.at(1), "attempts");
  const bool any = attempts.is_array() && !attempts.empty();
  std::string out = array_summary(replies.at(0)) + describe_job(replies.at(0), ctx.now) + "\nAttempts:" + (any ? "\n" + attempts_table(attempts, ctx.now) : " none\n");
  if (any) {
    for (const Json& a : attempts) {
      const std::string diagnosis = text_of(a, "diagnosis");
      if (diagnosis != kAbsent) out += "\nDiagnosis of attempt " + text_of(a, "number") + ":\n" + ensure_final_newline(diagnosis);
      out += stragglers_line(a);
      out += checkpoint_failures_line(a);
      out += quoted_output(a);
    }
  }
  return out;
}

Json ShowJob::to_json(const Replies& replies) const {
  if (provenance) return replies.at(0);
  const Json& attempts = field_or_null(replies.at(1), "attempts");
  return {{"job", replies.at(0)}, {"attempts", attempts.is_array() ? attempts : Json::array()}};
}

// ---- provenance ----

AttemptRef parse_attempt_ref(std::string_view text, std::string_view field) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return {parse_job_target(text, field), std::nullopt};
  const std::string_view attempt = text.substr(slash + 1);
  try {
    return {parse_job_target(text.substr(0, slash), field), parse_integer(field, attempt, 1, kAnyInt)};
  } catch (const InvalidInput&) {
    throw InvalidInput(std::string(field),
                       "must be JOB or JOB/ATTEMPT (JOB an id or ID_N, ATTEMPT a positive integer), got \"" +
                           std::string(text) + "\"");
  }
}

ApiRequest provenance_request(const AttemptRef& ref) {
  const std::string n = ref.attempt ? std::to_string(*ref.attempt) : "last";
  return {"GET", ref.job.path() + "/attempts/" + n + "/provenance", std::nullopt};
}

std::vector<FlagSpec> DiffProvenance::flags() { return {}; }

DiffProvenance DiffProvenance::parse(const ParsedArgs& args) {
  if (args.positionals.size() != 2) {
    throw InvalidInput(args.positionals.size() < 2 ? "B" : "A B",
                       "expected two runs, JOB or JOB/ATTEMPT, got " + std::to_string(args.positionals.size()));
  }
  return {parse_attempt_ref(args.positionals[0], "A"), parse_attempt_ref(args.positionals[1], "B")};
}

std::vector<ApiRequest> DiffProvenance::requests(const InputReader&) const {
  return {provenance_request(a), provenance_request(b)};
}

std::string DiffProvenance::render(const Replies& replies, const RenderContext&) const {
  return render_diff(replies.at(0), replies.at(1));
}

Json DiffProvenance::to_json(const Replies& replies) const {
  Json changes = Json::array();
  for (const FactChange& c : diff_records(replies.at(0), replies.at(1))) {
    changes.push_back({{"key", c.key},
                       {"before", c.before ? *c.before : Json(nullptr)},
                       {"after", c.after ? *c.after : Json(nullptr)}});
  }
  return {{"a", replies.at(0)}, {"b", replies.at(1)}, {"changes", std::move(changes)}};
}

// ---- logs ----

std::vector<FlagSpec> ShowLogs::flags() {
  return {{"--rank", "R", "only rank R"},
          {"--tail", "LINES", "only the last LINES lines of each rank's output (default 1000)"},
          {"--attempt", "N", "attempt number N (default: the latest)"},
          {"--follow", "", "keep printing new output of the newest attempt until the job ends"}};
}

ShowLogs ShowLogs::parse(const ParsedArgs& args) {
  ShowLogs logs;
  logs.job = parse_job_target(only_positional(args, "ID"));
  logs.rank = args.opt_integer("--rank", 0, kAnyInt);
  logs.tail = args.opt_integer("--tail", 1, kMaxLogLines);
  logs.attempt = args.opt_integer("--attempt", 1, kAnyInt);
  logs.follow = args.has("--follow");
  if (logs.follow && logs.attempt)
    throw InvalidInput("--attempt", "is not for --follow, which follows the newest attempt");
  return logs;
}

std::vector<ApiRequest> ShowLogs::requests(const InputReader&) const {
  const auto text = [](const std::optional<std::int64_t>& v) {
    return v ? std::optional(std::to_string(*v)) : std::nullopt;
  };
  Target target(job.path() + "/logs");
  target.param("rank", text(rank)).param("tail", text(tail)).param("attempt", text(attempt));
  return {{"GET", target.str(), std::nullopt}};
}

std::string ShowLogs::render(const Replies& replies, const RenderContext&) const {
  const Json& logs = field_or_null(replies.at(0), "logs");
  if (!logs.is_array()) return "";
  // Like `tail` over several files: headers only when there is more than one block to tell apart
  // or a block has something to say besides its text.
  std::string out;
  for (const Json& block : logs) {
    const std::string error = text_of(block, "error");
    const bool has_error = error != kAbsent && !error.empty();
    const std::string text = text_of(block, "text");
    if (logs.size() > 1 || has_error) {
      if (!out.empty()) out += "\n";
      out += "==> rank " + text_of(block, "rank") + " (" + text_of(block, "node") + ") <==\n";
    }
    if (text != kAbsent && !text.empty()) out += ensure_final_newline(text);
  }
  return out;
}

Notices ShowLogs::notices(const Replies& replies) const {
  Notices notices;
  const Json& logs = field_or_null(replies.at(0), "logs");
  if (!logs.is_array() || logs.empty()) {
    return {{"no logs were returned for job " + job.text()}, true};
  }
  if (const Json& array = field_or_null(replies.at(0), "array"); array.is_object() && !job.task) {
    const std::string id = text_of(array, "job_id");
    notices.lines.push_back("job " + job.text() + " is an array: these are task " + id + "_" + text_of(array, "task_id") +
                            "'s logs; 'trainyard logs " + id + "_N' shows task N's");
  }
  for (const Json& block : logs) {
    const std::string who = "rank " + text_of(block, "rank") + " (" + text_of(block, "node") + ")";
    const std::string error = text_of(block, "error");
    if (error != kAbsent && !error.empty()) {
      notices.lines.push_back(who + ": logs unavailable: " + error);
      notices.failed = true;
    } else if (field_or_null(block, "truncated") == true) {
      const std::string text = text_of(block, "text");
      const auto lines = std::count(text.begin(), text.end(), '\n') + (!text.empty() && text.back() != '\n');
      notices.lines.push_back(who + ": showing the last " + std::to_string(lines) + " lines of " +
                              format_bytes(field_or_null(block, "log_bytes")) + "; use --tail N for more");
    }
  }
  return notices;
}

// ---- cancel ----

std::vector<FlagSpec> CancelJob::flags() { return {}; }

CancelJob CancelJob::parse(const ParsedArgs& args) {
  if (args.positionals.empty()) throw InvalidInput("ID", "is required");
  CancelJob cancel;
  for (const std::string& id : args.positionals) cancel.jobs.push_back(parse_job_target(id));
  return cancel;
}

std::vector<ApiRequest> CancelJob::requests(const InputReader&) const {
  std::vector<ApiRequest> posts;
  for (const JobTarget& job : jobs) posts.push_back({"POST", job.path() + "/cancel", std::nullopt});
  return posts;
}

std::string CancelJob::render(const Replies& replies, const RenderContext&) const {
  std::string out;
  for (std::size_t i = 0; i < replies.size() && i < jobs.size(); ++i) {
    const std::string job = jobs[i].text();
    const Json& array = field_or_null(replies[i], "array");
    if (array.is_object() && array.contains("cancelled_tasks")) {
      out += "Cancel requested for " + text_of(array, "cancelled_tasks") + " tasks of array job " + job + "\n";
      continue;
    }
    const std::string state = text_of(replies[i], "state");
    const auto parsed = parse_job_state(state);
    out += parsed && is_terminal(*parsed) ? "Job " + job + " is " + state + "\n"
                                          : "Cancel requested for job " + job + " (" + state + ")\n";
  }
  return out;
}

}  // namespace trainyard::cli
