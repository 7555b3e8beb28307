/* OpenMPI's MPI_Allreduce (float sum, in place, like our all_reduce_sum) timed and printed in the
 * same nccl-tests format as collectives_bench, so compare_openmpi.sh can set the two side by side.
 * Same method: one warm-up call, a barrier, `iters` timed calls, the slowest rank's average, then
 * one call on fresh integer-valued data is checked (#wrong).
 *
 *   mpirun ... mpi_allreduce_bench SIZE_BYTES... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static float value(int rank, size_t i) { return (float)(i % 251) + (float)rank; }
static float sum(int world, size_t i) { return (float)world * (float)(i % 251) + (float)(world * (world - 1) / 2); }
static int iterations_for(size_t bytes) { return bytes <= (1u << 20) ? 50 : bytes <= (64u << 20) ? 5 : 2; }

static void fill(float* data, size_t count, int rank) {
  for (size_t i = 0; i < count; ++i) data[i] = value(rank, i);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (rank == 0) {
    printf("#\n# collective=mpi_allreduce ranks=%d transport=openmpi-btl-tcp-loopback processes=separate\n", world);
    printf("#%12s %12s %8s %6s %10s %8s %8s %7s\n", "size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong");
    printf("#%12s %12s %8s %6s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  }
  for (int a = 1; a < argc; ++a) {
    const size_t bytes = strtoull(argv[a], NULL, 10);
    const size_t count = bytes / sizeof(float);
    float* data = malloc(count * sizeof(float));
    if (data == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    fill(data, count, rank);
    MPI_Allreduce(MPI_IN_PLACE, data, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const int iters = iterations_for(bytes);
    const double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) MPI_Allreduce(MPI_IN_PLACE, data, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const double mine = (MPI_Wtime() - start) / iters;
    double seconds = 0;
    MPI_Reduce(&mine, &seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    fill(data, count, rank);
    MPI_Allreduce(MPI_IN_PLACE, data, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    long wrong = 0, total_wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += data[i] != sum(world, i);
    MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double algbw = (double)bytes / seconds;
      printf(" %12zu %12zu %8s %6s %10.1f %8.2f %8.2f %7ld\n", bytes, count, "float", "sum", seconds * 1e6, algbw / 1e9,
             algbw * 2.0 * (world - 1) / world / 1e9, total_wrong);
      fflush(stdout);
    }
    free(data);
  }
  MPI_Finalize();
  return 0;
}
