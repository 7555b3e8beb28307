#include "proto/output_path.h"

#include "proto/errors.h"
#include "proto/job.h"

namespace trainyard::inline proto {
namespace {

constexpr std::string_view kPatterns = "jxuNnAa%";

}  // namespace

void check_output_pattern(const std::string& field, std::string_view pattern) {
  if (pattern.empty()) throw InvalidInput(field, "must name a file");
  if (pattern.size() > kMaxPathBytes) {
    throw InvalidInput(field, "must be at most " + std::to_string(kMaxPathBytes) + " bytes");
  }
  if (pattern.find('\0') != std::string_view::npos) throw InvalidInput(field, "must not contain a NUL byte");
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (i + 1 == pattern.size() || kPatterns.find(pattern[i + 1]) == std::string_view::npos) {
      const std::string given = i + 1 == pattern.size() ? "a % at the end" : "%" + std::string(1, pattern[i + 1]);
      throw InvalidInput(field, given + " is not a pattern Trainyard fills in (%j %x %u %N %n %A %a, or %% for a %)");
    }
    ++i;
  }
}

bool output_per_node(std::string_view pattern) {
  for (std::size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (pattern[i + 1] == 'N' || pattern[i + 1] == 'n') return true;
    ++i;  // %% and the other patterns
  }
  return false;
}

std::string expand_output_path(std::string_view pattern, const OutputPathFacts& facts) {
  std::string path;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      path += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'j': path += std::to_string(facts.job_id); break;
      case 'x': path += facts.job_name; break;
      case 'u': path += facts.user; break;
      case 'N': path += facts.node; break;
      case 'n': path += std::to_string(facts.node_rank); break;
      case 'A': path += std::to_string(facts.array_job.value_or(facts.job_id)); break;
      case 'a': path += std::to_string(facts.array_task); break;
      case '%': path += '%'; break;
      default: path += '%'; path += pattern[i]; break;  // refused at submission; kept as written
    }
  }
  return path;
}

}  // namespace trainyard::inline proto
