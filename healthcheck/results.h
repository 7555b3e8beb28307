#pragma once
// What the health suites measure (docs/DESIGN.md "Health checks"). These values travel from the agent to the
// daemon and out through the REST API (codecs in health_json.h); the daemon's verdicts
// (verdict.h, localisation.h) are pure functions of them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/collective_bandwidth.h"

namespace trainyard::healthcheck {

// ---- Accelerator sanity suite (per core) ----

enum class AcceleratorTest { gemm, stochastic_rounding, memory };

// skipped: an earlier test on the same core crashed or timed out, so the core is not trusted to
// run more work (and a hung core would only hang again).
enum class CheckStatus { passed, failed, timed_out, crashed, skipped };

struct CheckResult {
  AcceleratorTest test = AcceleratorTest::gemm;
  CheckStatus status = CheckStatus::passed;
  // The test's figure of merit and the bound it must stay within (passed iff measured <= limit):
  // gemm: worst |error| against the fp64 reference and the fp32 error bound at that element;
  // stochastic_rounding: |mean rounding error| and the Bernstein bound (or the count of results that
  // are not a bf16 neighbour of their input, limit 0); memory: words read back wrong, limit 0;
  // timed_out: the elapsed and the budget, in ms.
  double measured = 0;
  double limit = 0;
  double duration_ms = 0;
  std::string reason;  // names the core, e.g. "core 3: GEMM element [5,17] off by 1.52 (tolerance 6.1e-05)"
  bool operator==(const CheckResult&) const = default;
};

struct CoreResult {
  int core = 0;
  std::vector<CheckResult> checks;  // in AcceleratorTest order
  // The fastest of `timing_repeats` GEMMs of `gemm_size` on this core, in ms (the fastest, because
  // a repeat that was preempted on a shared host only adds time); 0 when the GEMM test did not pass.
  double gemm_ms = 0;
  bool passed() const;
  bool operator==(const CoreResult&) const = default;
};

struct AcceleratorReport {
  std::vector<CoreResult> cores;  // ascending core index
  double duration_ms = 0;
  bool operator==(const AcceleratorReport&) const = default;
};

// ---- Collective suite (per rank) ----

struct CollectiveMeasurement {
  CollectiveKind kind = CollectiveKind::all_reduce;
  bool exact = false;       // every element equalled the known integer answer
  std::size_t bytes = 0;    // the whole buffer, as nccl-tests counts it
  double seconds = 0;       // the fastest of the timed iterations
  double busbw = 0;         // bytes per second (proto/collective_bandwidth.h)
  std::string error;        // why it is not exact or did not complete; empty when fine
  bool operator==(const CollectiveMeasurement&) const = default;
};

struct RankCollectiveResult {
  int rank = 0;
  int world_size = 0;
  // One per collective that ran; after a collective fails to complete, the communicator is
  // unusable and the remaining ones are not attempted.
  std::vector<CollectiveMeasurement> collectives;
  std::string error;                 // the communication failure, empty if none
  std::optional<int> failed_peer;    // the rank the failure names, if it names one
  // Connections this rank's data-plane port refused while the suite ran (no hello in time, a bad
  // hello, a wrong secret, over the caps): someone outside the check was at the port.
  std::uint64_t refused_connections = 0;
  bool correct() const;              // completed everything and every result was exact
  bool operator==(const RankCollectiveResult&) const = default;
};

// One collective suite over a set of nodes: `nodes[r]` ran as rank r and reported `ranks[r]`.
struct CollectiveRun {
  std::vector<std::string> nodes;
  std::vector<RankCollectiveResult> ranks;
  bool operator==(const CollectiveRun&) const = default;
};

std::string to_string(AcceleratorTest t);
std::string to_string(CheckStatus s);
std::optional<AcceleratorTest> parse_accelerator_test(std::string_view s);
std::optional<CheckStatus> parse_check_status(std::string_view s);
std::optional<CollectiveKind> parse_collective_kind(std::string_view s);

}  // namespace trainyard::healthcheck
