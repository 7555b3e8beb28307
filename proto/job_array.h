#pragma once
// Job arrays and dependencies: the grammar users write, parsed at the boundary.
//
// An array spec is Slurm's: "0-99", "0-99:4" (every 4th), "1,5,9", any mix of those separated by
// commas, optionally ending in "%K" (at most K tasks running at once). Indices are 0..kMaxArrayIndex,
// listed at most once, kept in ascending order: task ids ID..ID+n-1 follow that order, so "ID_N"
// maps to a job id without a lookup table.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::inline proto {

inline constexpr int kMaxArrayIndex = 999'999;
inline constexpr int kDefaultMaxArraySize = 10'000;

struct ArraySpec {
  std::vector<int> indices;  // ascending, unique
  std::optional<int> limit;  // %K
  bool operator==(const ArraySpec&) const = default;
};

// Throws InvalidInput(field, ...) for bad grammar, indices out of range, repeated indices, or more
// than `max_size` tasks (the message names the limit and how to raise it).
ArraySpec parse_array_spec(std::string_view text, int max_size, const std::string& field = "array");
// What is wrong with an array of more than `max_size` tasks: the limit and how to raise it.
std::string too_many_tasks(int max_size);
// The canonical text of a parsed spec ("0-9:3%2"): ranges folded back where the step is constant.
std::string to_string(const ArraySpec& spec);

// "123" or "123_7": a job, or task 7 of array job 123. Throws InvalidInput(field, ...).
struct JobRef {
  std::int64_t job = 0;
  std::optional<int> task;
};
JobRef parse_job_ref(std::string_view text, const std::string& field = "id");

enum class DependencyCondition { afterok, afterany, afternotok, aftercorr };
std::string to_string(DependencyCondition c);
std::optional<DependencyCondition> parse_dependency_condition(std::string_view s);

struct Dependency {
  std::int64_t job = 0;
  DependencyCondition condition = DependencyCondition::afterok;
  bool operator==(const Dependency&) const = default;
};
// Slurm's --dependency text: "afterok:12", "afterany:12:13,afternotok:14". Throws InvalidInput.
std::vector<Dependency> parse_dependency_flag(std::string_view text, const std::string& field = "--depend");

}  // namespace trainyard::proto
