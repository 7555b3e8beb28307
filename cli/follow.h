#pragma once
// The pure parts of the commands that follow the cluster over time: `--watch` redraws,
// `logs --follow` and `submit --wait`. The runner does the polling; these decide what to print.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/api_request.h"
#include "proto/job.h"
#include "proto/json_reader.h"

namespace trainyard::cli {

// `next` with the characters that differ from `previous` at the same line and column shown in
// reverse video (like `watch -d`). Both are terminal-safe text, so the only escape codes in the
// result are the highlights.
std::string highlight_changes(std::string_view previous, std::string_view next);

// What a terminal gets each --watch round: home, clear, the header line and the screen.
std::string redraw(std::string_view header, std::string_view screen);

// Turns successive replies of GET /v1/jobs/{id}/logs into the new output since the last one. The
// route answers with each rank's tail and the size of its whole log (`log_bytes`): what grew since
// the last reply is the end of the tail. Lines of different ranks are interleaved whole, each with
// "[rank N] " when `prefix_ranks`; a rank's unfinished last line waits for its end (or `finish`).
// A new attempt (a retry) starts again from its first byte, under a line that says so.
class LogFollower {
 public:
  explicit LogFollower(bool prefix_ranks) : prefix_ranks_(prefix_ranks) {}
  std::string take(const Json& reply);
  // The unfinished lines, when the job has ended.
  std::string finish();
  // Bytes that grew faster than the tail could carry between two replies (not shown).
  std::int64_t skipped_bytes() const { return skipped_; }

 private:
  struct Rank {
    std::int64_t seen = 0;  // bytes of its log accounted for
    std::string partial;    // an unfinished last line
  };
  std::string complete_lines(std::int64_t rank, Rank& r, std::string_view fresh);
  std::string prefix(std::int64_t rank) const;

  bool prefix_ranks_;
  std::optional<std::int64_t> attempt_;
  std::map<std::int64_t, Rank> ranks_;
  std::int64_t skipped_ = 0;
};

// `submit --wait`'s exit status for the job's final JSON: 0 when it SUCCEEDED, its exit code when
// it FAILED with a non-zero one, kExitFailedWithoutCode or kExitCancelled otherwise.
inline constexpr int kExitFailedWithoutCode = 3;
inline constexpr int kExitCancelled = 4;
int exit_status_of_job(const Json& job);

// The line `submit --wait` and `wait` print for a job that has ended ("Job 42 FAILED (exit code
// 1, oom): out of memory: ..." with its class and reason unless it SUCCEEDED), or for an array's
// folded row ("Array 18 FAILED (1 FAILED, 2 SUCCEEDED)").
std::string ended_line(const Json& job_or_array_row);

// Whether the job's JSON shows a state it never leaves.
bool job_has_ended(const Json& job);

// `submit --wait` of an array follows every task, not only the first: the array as the daemon's
// list folds it (one row, its tasks counted by state) until it has ended, then its tasks.
struct SubmittedArray {
  JobId array_job = 0;
  int task_count = 0;
};
// The array a submit's reply (its first task's record) belongs to; nullopt for a plain job.
std::optional<SubmittedArray> submitted_array(const Json& reply);
// The list page whose first row is the folded array: newest first, from just past its last task.
ApiRequest folded_array_request(const SubmittedArray& array);
// One page of the array's tasks; `cursor` continues from the previous page's "next".
ApiRequest array_tasks_request(const SubmittedArray& array, const std::optional<std::string>& cursor);
// As Slurm's `sbatch --wait` for an array: the highest of its tasks' exit statuses.
int exit_status_of_array(const std::vector<Json>& tasks);

}  // namespace trainyard::cli
