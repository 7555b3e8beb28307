// What a simulated rank needs (proto/workload_memory.h), counted from the kernel's shapes.
#include <gtest/gtest.h>

#include "proto/workload_memory.h"

namespace trainyard::testing {
namespace {

WorkloadSpec spec(int width, int depth, int global_batch) {
  WorkloadSpec w;
  w.width = width;
  w.depth = depth;
  w.global_batch = global_batch;
  return w;
}

TEST(WorkloadMemory, TheKernelsBuffersAreCountedFromItsShapes) {
  // width 1024, depth 4, input 32, output 8, 1024 rows on one rank, in floats: parameters
  // 32*1024+1024 + 3*(1024*1024+1024) + 1024*8+8 = 3,187,720, and state 10 times that (+1);
  // teacher 32*1024+1024+1024*8+8 = 42,248; activations 1024*(4128+4104) + 1024*(32+16) +
  // 2*1024*1024 = 10,576,896; packed operands 2*1024*1024. 44,767,393 floats of 4 bytes: 170.8 MiB.
  EXPECT_EQ(simulated_kernel_memory_mb(spec(1024, 4, 1024), 1), 171);
  // The rank's bound adds a quarter and the process.
  EXPECT_EQ(simulated_rank_memory_mb(spec(1024, 4, 1024), 1), 171 + 43 + kSimulatedProcessMemoryMb);
}

TEST(WorkloadMemory, ParametersGrowWithTheSquareOfTheWidthAndTheBatchIsSplitAcrossRanks) {
  const std::int64_t narrow = simulated_kernel_memory_mb(spec(1024, 8, 64), 1);
  const std::int64_t wide = simulated_kernel_memory_mb(spec(2048, 8, 64), 1);
  EXPECT_GT(wide, 3 * narrow);
  const std::int64_t one_rank = simulated_kernel_memory_mb(spec(256, 8, 65536), 1);
  const std::int64_t eight_ranks = simulated_kernel_memory_mb(spec(256, 8, 65536), 8);
  EXPECT_GT(one_rank, 4 * eight_ranks);
  // The default spec is small: the process's own room dominates.
  EXPECT_LE(simulated_rank_memory_mb(WorkloadSpec{}, 1), kSimulatedProcessMemoryMb + 2);
}

}  // namespace
}  // namespace trainyard::testing
