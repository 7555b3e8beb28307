#pragma once
// Where a rank's output is copied as well as kept (sbatch's -o/--output and -e/--error): a path in
// which the agent fills in Slurm's patterns, relative to the rank's working directory. The job's
// own log (`trainyard logs`) keeps everything either way.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::inline proto {

// What the patterns stand for: %j the job id, %x its name, %u its user, %N the node's name, %n the
// node's rank in the attempt, %A an array's id (else the job id), %a the task's index (else 0), %%.
struct OutputPathFacts {
  std::int64_t job_id = 0;
  std::string job_name;
  std::string user;
  std::string node;
  int node_rank = 0;
  std::optional<std::int64_t> array_job;
  int array_task = 0;
};

// Throws InvalidInput naming `field` for an empty pattern, a NUL, one too long, or a % that is none
// of the patterns above.
void check_output_pattern(const std::string& field, std::string_view pattern);

// Every node writes a file of its own when the pattern names the node (%N, %n); otherwise only the
// first rank's does, as only the batch script's node writes Slurm's.
bool output_per_node(std::string_view pattern);

std::string expand_output_path(std::string_view pattern, const OutputPathFacts& facts);

}  // namespace trainyard::inline proto
