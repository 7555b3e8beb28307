// hold, release, requeue and update: a job's levers short of cancelling it (like scontrol).
#include <limits>

#include "cli/commands.h"
#include "cli/table.h"
#include "cli/time_limit.h"

namespace trainyard::cli {
namespace {

// "Job 12 held (PENDING: held by its owner)", or for a whole array "Array job 12: 5 tasks held, 2 unchanged".
std::string job_line(const JobTarget& target, const std::string& what, const Json& job) {
  const Json& array = field_or_null(job, "array");
  const Json& changed = field_or_null(array, what + "_tasks");
  if (changed.is_number_integer()) {
    return "Array job " + target.text() + ": " + changed.dump() + (changed == 1 ? " task " : " tasks ") + what + ", " +
           text_of(array, "unchanged_tasks") + " unchanged\n";
  }
  const Json& pending = job.contains("pending_reason") ? job["pending_reason"] : Json();
  const std::string why = pending.is_object() ? text_of(pending, "message") : text_of(job, "reason");
  return "Job " + target.text() + " " + what + " (" + text_of(job, "state") + ": " + why + ")\n";
}

}  // namespace

std::vector<FlagSpec> HoldJob::flags() { return {}; }
HoldJob HoldJob::parse(const ParsedArgs& args) { return HoldJob{parse_job_target(only_positional(args, "ID"))}; }
std::vector<ApiRequest> HoldJob::requests(const InputReader&) const {
  return {{"POST", job.path() + "/hold", std::nullopt}};
}
std::string HoldJob::render(const Replies& replies, const RenderContext&) const {
  return job_line(job, "held", replies.at(0));
}

std::vector<FlagSpec> ReleaseJob::flags() { return {}; }
ReleaseJob ReleaseJob::parse(const ParsedArgs& args) {
  return ReleaseJob{parse_job_target(only_positional(args, "ID"))};
}
std::vector<ApiRequest> ReleaseJob::requests(const InputReader&) const {
  return {{"POST", job.path() + "/release", std::nullopt}};
}
std::string ReleaseJob::render(const Replies& replies, const RenderContext&) const {
  return job_line(job, "released", replies.at(0));
}

std::vector<FlagSpec> RequeueJob::flags() { return {}; }
RequeueJob RequeueJob::parse(const ParsedArgs& args) {
  return RequeueJob{parse_job_target(only_positional(args, "ID"))};
}
std::vector<ApiRequest> RequeueJob::requests(const InputReader&) const {
  return {{"POST", job.path() + "/requeue", std::nullopt}};
}
std::string RequeueJob::render(const Replies& replies, const RenderContext&) const {
  const Json& requeued = field_or_null(field_or_null(replies.at(0), "array"), "requeued_tasks");
  if (requeued.is_number_integer())
    return "Requeue requested for " + requeued.dump() + " tasks of array job " + job.text() + "\n";
  return "Requeue requested for job " + job.text() + "\n";
}

std::vector<FlagSpec> UpdateJob::flags() {
  return {{"--priority", "P", "new priority within the share (owners: only lower)"},
          {"--time", "T", "new wall-clock limit of an attempt as sbatch takes it: MINUTES, HH:MM:SS, D-HH:MM:SS, 45m, "
                          "UNLIMITED (owners: only shorter)"},
          {"--timeout", "SECONDS", "the same limit counted in seconds (or 90s, 45m, 12h, 2d)", false, {"--timeout-s"}},
          {"--nodes", "K", "new number of nodes"}};
}

UpdateJob UpdateJob::parse(const ParsedArgs& args) {
  UpdateJob update{parse_job_target(only_positional(args, "ID")), Json::object()};
  if (auto priority = args.opt_integer("--priority", kAnyIntMin, kAnyInt)) update.changes["priority"] = *priority;
  if (auto timeout = time_limit_flags(args)) update.changes["timeout_s"] = *timeout;
  if (auto nodes = args.opt_integer("--nodes", kAnyIntMin, kAnyInt)) update.changes["nodes"] = *nodes;
  if (update.changes.empty()) throw InvalidInput("--priority", "give at least one of --priority, --time, --nodes");
  return update;
}

std::vector<ApiRequest> UpdateJob::requests(const InputReader&) const { return {{"PATCH", job.path(), changes}}; }
std::string UpdateJob::render(const Replies& replies, const RenderContext&) const {
  return job_line(job, "updated", replies.at(0));
}

}  // namespace trainyard::cli
