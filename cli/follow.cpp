#include "cli/follow.h"

#include <algorithm>
#include <vector>

#include "cli/table.h"
#include "proto/job.h"

namespace trainyard::cli {
namespace {

constexpr std::string_view kReverse = "\x1b[7m";
constexpr std::string_view kNormal = "\x1b[0m";

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return lines;
}

std::string highlight_line(std::string_view before, std::string_view after) {
  std::string out;
  bool in_change = false;
  for (std::size_t i = 0; i < after.size(); ++i) {
    const bool changed = i >= before.size() || before[i] != after[i];
    if (changed != in_change) out += changed ? kReverse : kNormal;
    in_change = changed;
    out += after[i];
  }
  if (in_change) out += kNormal;
  return out;
}

std::int64_t int_of(const Json& object, std::string_view key, std::int64_t otherwise) {
  const Json& v = field_or_null(object, key);
  return v.is_number_integer() ? v.get<std::int64_t>() : otherwise;
}

}  // namespace

std::string highlight_changes(std::string_view previous, std::string_view next) {
  const auto before = lines_of(previous);
  const auto after = lines_of(next);
  std::string out;
  for (std::size_t i = 0; i < after.size(); ++i) {
    out += highlight_line(i < before.size() ? before[i] : std::string_view(), after[i]);
    out += '\n';
  }
  return out;
}

std::string redraw(std::string_view header, std::string_view screen) {
  return "\x1b[H\x1b[2J" + std::string(header) + "\n\n" + std::string(screen);
}

std::string LogFollower::prefix(std::int64_t rank) const {
  return prefix_ranks_ ? "[rank " + std::to_string(rank) + "] " : "";
}

std::string LogFollower::complete_lines(std::int64_t rank, Rank& r, std::string_view fresh) {
  r.partial.append(fresh);
  const auto last_newline = r.partial.rfind('\n');
  if (last_newline == std::string::npos) return "";
  std::string out;
  for (std::string_view line : lines_of(std::string_view(r.partial).substr(0, last_newline + 1))) {
    out += prefix(rank) + std::string(line) + "\n";
  }
  r.partial.erase(0, last_newline + 1);
  return out;
}

std::string LogFollower::take(const Json& reply) {
  std::string out;
  const std::int64_t attempt = int_of(reply, "attempt", 0);
  if (attempt_ && *attempt_ != attempt) {
    out += finish();
    ranks_.clear();
    out += "--- attempt " + std::to_string(attempt) + " ---\n";
  }
  attempt_ = attempt;
  const Json& logs = field_or_null(reply, "logs");
  if (!logs.is_array()) return out;
  for (const Json& block : logs) {
    const Json& text = field_or_null(block, "text");
    if (!text.is_string()) continue;  // this rank's agent did not answer this time
    const std::int64_t rank = int_of(block, "rank", 0);
    const std::string& tail = text.get_ref<const std::string&>();
    Rank& r = ranks_[rank];
    const std::int64_t size = int_of(block, "log_bytes", r.seen);
    // The first reply shows the tail as it is; later ones only what grew (a log never shrinks).
    const std::int64_t grown =
        r.seen == 0 && size > 0 ? static_cast<std::int64_t>(tail.size()) : std::max<std::int64_t>(0, size - r.seen);
    const auto shown = std::min<std::int64_t>(grown, static_cast<std::int64_t>(tail.size()));
    if (r.seen > 0) skipped_ += grown - shown;
    r.seen = size;
    out += complete_lines(rank, r, std::string_view(tail).substr(tail.size() - static_cast<std::size_t>(shown)));
  }
  return out;
}

std::string LogFollower::finish() {
  std::string out;
  for (auto& [rank, r] : ranks_) {
    if (!r.partial.empty()) out += prefix(rank) + r.partial + "\n";
    r.partial.clear();
  }
  return out;
}

int exit_status_of_job(const Json& job) {
  const auto state = parse_job_state(text_of(job, "state"));
  if (state == JobState::succeeded) return 0;
  if (state == JobState::cancelled) return kExitCancelled;
  const Json& code = field_or_null(job, "exit_code");
  if (code.is_number_integer() && code.get<std::int64_t>() > 0 && code.get<std::int64_t>() < 256) {
    return static_cast<int>(code.get<std::int64_t>());
  }
  return kExitFailedWithoutCode;
}

std::string ended_line(const Json& job_or_array_row) {
  const Json& counts = field_or_null(field_or_null(job_or_array_row, "array"), "counts");
  if (counts.is_object()) {
    std::string listed;
    for (const auto& [state, count] : counts.items()) listed += (listed.empty() ? "" : ", ") + count.dump() + " " + state;
    return "Array " + text_of(job_or_array_row, "id") + " " + text_of(job_or_array_row, "state") + " (" + listed + ")\n";
  }
  const std::string state = text_of(job_or_array_row, "state");
  std::string facts;
  if (const std::string code = text_of(job_or_array_row, "exit_code"); code != kAbsent) facts = "exit code " + code;
  // What went wrong, as `trainyard job ID` says it, so a script's log shows why without another call.
  const bool went_wrong = state != "SUCCEEDED";
  if (const std::string cls = text_of(job_or_array_row, "failure_class"); went_wrong && cls != kAbsent) {
    facts += (facts.empty() ? "" : ", ") + cls;
  }
  std::string line = "Job " + text_of(job_or_array_row, "id") + " " + state + (facts.empty() ? "" : " (" + facts + ")");
  if (const std::string reason = text_of(job_or_array_row, "reason"); went_wrong && reason != kAbsent && !reason.empty()) {
    line += ": " + reason;
  }
  return line + "\n";
}

bool job_has_ended(const Json& job) {
  const auto state = parse_job_state(text_of(job, "state"));
  return state && is_terminal(*state);
}

std::optional<SubmittedArray> submitted_array(const Json& reply) {
  const Json& array = field_or_null(reply, "array");
  const Json& job = field_or_null(array, "job_id");
  const Json& count = field_or_null(array, "task_count");
  if (!job.is_number_integer() || !count.is_number_integer() || count.get<std::int64_t>() < 1) return std::nullopt;
  return SubmittedArray{job.get<JobId>(), static_cast<int>(count.get<std::int64_t>())};
}

ApiRequest folded_array_request(const SubmittedArray& array) {
  return {"GET",
          Target("/v1/jobs").param("before", std::to_string(array.array_job + array.task_count)).param("limit", "1").str(),
          std::nullopt};
}

ApiRequest array_tasks_request(const SubmittedArray& array, const std::optional<std::string>& cursor) {
  return {"GET",
          Target("/v1/jobs").param("array", std::to_string(array.array_job)).param("limit", "1000").param("cursor", cursor).str(),
          std::nullopt};
}

int exit_status_of_array(const std::vector<Json>& tasks) {
  int highest = 0;
  for (const Json& task : tasks) highest = std::max(highest, exit_status_of_job(task));
  return highest;
}

}  // namespace trainyard::cli
