#include "healthcheck/results.h"

#include <algorithm>

namespace trainyard::healthcheck {
namespace {

// `to_string` is found by argument-dependent lookup (CollectiveKind's lives in trainyard::).
template <typename Enum, std::size_t N>
std::optional<Enum> parse_enum(std::string_view s, const Enum (&values)[N]) {
  for (Enum v : values) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

constexpr AcceleratorTest kTests[] = {AcceleratorTest::gemm, AcceleratorTest::stochastic_rounding,
                                      AcceleratorTest::memory};
constexpr CheckStatus kStatuses[] = {CheckStatus::passed, CheckStatus::failed, CheckStatus::timed_out,
                                     CheckStatus::crashed, CheckStatus::skipped};
constexpr CollectiveKind kKinds[] = {CollectiveKind::all_reduce, CollectiveKind::all_gather,
                                     CollectiveKind::reduce_scatter};

}  // namespace

bool CoreResult::passed() const {
  return std::all_of(checks.begin(), checks.end(), [](const CheckResult& c) { return c.status == CheckStatus::passed; });
}

bool RankCollectiveResult::correct() const {
  return error.empty() && std::all_of(collectives.begin(), collectives.end(),
                                      [](const CollectiveMeasurement& m) { return m.exact && m.error.empty(); });
}

std::string to_string(AcceleratorTest t) {
  switch (t) {
    case AcceleratorTest::gemm: return "gemm";
    case AcceleratorTest::stochastic_rounding: return "stochastic_rounding";
    case AcceleratorTest::memory: return "memory";
  }
  return "unknown";
}

std::string to_string(CheckStatus s) {
  switch (s) {
    case CheckStatus::passed: return "passed";
    case CheckStatus::failed: return "failed";
    case CheckStatus::timed_out: return "timed_out";
    case CheckStatus::crashed: return "crashed";
    case CheckStatus::skipped: return "skipped";
  }
  return "unknown";
}

std::optional<AcceleratorTest> parse_accelerator_test(std::string_view s) { return parse_enum(s, kTests); }
std::optional<CheckStatus> parse_check_status(std::string_view s) { return parse_enum(s, kStatuses); }

std::optional<CollectiveKind> parse_collective_kind(std::string_view s) { return parse_enum(s, kKinds); }

}  // namespace trainyard::healthcheck
