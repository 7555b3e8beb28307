#pragma once
// The collective suite (docs/DESIGN.md "Health checks"), run by every rank of a set of nodes at once through a
// `neuron::Communicator` (TcpCommunicator between agents; the in-process one in tests): all-gather,
// all-reduce and reduce-scatter, each checked element by element against the known answer and
// timed for busbw (proto/collective_bandwidth.h, nccl-tests definitions).
//
// Data: rank r contributes small integers derived from (r, index), so every sum is exact in fp32
// whatever order a transport adds in; a single wrong element is a wrong result, not rounding.
// Timing: one untimed warm-up (connections open on the first collective), then the fastest of
// `iterations` runs: on a shared host, interference only ever adds time, while a degraded link
// (a throttled one) is slow on every run, so the fastest run separates them best. Every run is
// checked for correctness, not only the fastest.
// A collective that fails to complete (CollectiveError) ends the suite for this rank: the
// communicator is unusable afterwards. The error and the peer it names are in the result.
//
// Threading contract: as Communicator (the calling thread only); every rank of the set must call
// it with the same options.
#include "healthcheck/results.h"
#include "healthcheck/suite_options.h"
#include "neuron/communicator.h"

namespace trainyard::agent {

healthcheck::RankCollectiveResult run_collective_suite(neuron::Communicator& communicator,
                                                  const healthcheck::CollectiveSuiteOptions& options);

}  // namespace trainyard::agent
