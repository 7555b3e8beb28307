#pragma once
// A command process's progress file (TRAINYARD_PROGRESS_FILE), in either of its two formats
// (README "Reporting progress and metrics"):
//   - JSON lines, appended, one object a line, as the `trainyard` Python module writes them (any
//     language may): {"step": 12, "loss": 0.41, "lr": 3e-4, "samples_per_s": 950} reports a step
//     and its metrics (loss, lr, grad_norm, param_norm, samples_per_s; null or absent: not
//     measured; other keys are kept by no one); {"phase": "checkpoint"} enters a phase;
//     {"phase": "", "phase_ended": "checkpoint", "seconds": 2.5} leaves it, and a checkpoint or save
//     phase's seconds count as checkpoint time (goodput); {"checkpoint_written": PATH, "step": 40}
//     says the checkpoint of step 40 is complete at PATH.
//   - the whole file "STEP [PHASE]", rewritten by the process (`echo "412 all-reduce" > "$FILE"`).
// The first byte decides: '{' is JSON lines. The job owns the file: it is read without blocking or
// following a link, at most kMaxReadBytes a look; a line longer than kMaxLineBytes, or one that is
// not such an object, is skipped and counted.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/metrics.h"

namespace trainyard::agent {

inline constexpr std::size_t kMaxReadBytes = 256 * 1024;
inline constexpr std::size_t kMaxLineBytes = 4096;

struct WrittenCheckpoint {
  std::string path;
  std::int64_t step = 0;
};

// What the lines read since the last look said.
struct ProgressUpdate {
  std::optional<std::int64_t> step;  // the highest step reported
  std::optional<std::string> phase;  // the latest phase ("" once a phase ended back to none)
  std::vector<StepMetric> metrics;   // steps reported with at least one metric, in order
  std::int64_t checkpoint_ms = 0;    // time in checkpoint and save phases that ended
  std::vector<WrittenCheckpoint> checkpoints;
  std::int64_t skipped_lines = 0;
};

// Pure: one line of the JSON-lines format, added to `update`; false when it is not one.
bool apply_progress_line(std::string_view line, ProgressUpdate& update);
// Pure: the whole-file format; nullopt when the text does not start with a step.
std::optional<ProgressUpdate> parse_step_file(std::string_view text);

class ProgressFile {
 public:
  explicit ProgressFile(std::string path) : path_(std::move(path)) {}
  // What was added since the last look (the whole-file format: what the file says now).
  ProgressUpdate read();

 private:
  std::string path_;
  std::int64_t offset_ = 0;  // of JSON lines read so far
};

}  // namespace trainyard::agent
