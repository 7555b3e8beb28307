#!/usr/bin/env bash
# All-reduce busbw of Trainyard's ring collectives against OpenMPI's MPI_Allreduce, both over TCP
# on loopback, same sizes and rank counts, in one run, printed side by side (target: ours
# at 64 MiB with 4 ranks at least OpenMPI's; figures in bench/collectives/RESULTS.md).
#
#   bench/collectives/compare_openmpi.sh [BUILD_DIR]        (default BUILD_DIR: ./build)
#   env: RANKS="2 4 8"  SIZES="1048576 67108864 268435456"  COLLECTIVES_BENCH=path/to/binary
#
# Installs Debian's openmpi-bin and libopenmpi-dev if mpicc/mpirun are missing. OpenMPI is pinned
# to its TCP transport on lo (pml ob1 + btl tcp,self) so neither side uses shared memory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="${1:-build}"
ours="${COLLECTIVES_BENCH:-$build_dir/bench/collectives/collectives_bench}"
ranks="${RANKS:-2 4 8}"
sizes="${SIZES:-1048576 67108864 268435456}"

if [[ ! -x "$ours" ]]; then
  echo "compare_openmpi.sh: $ours not found; build it first: ninja -C $build_dir collectives_bench" >&2
  exit 2
fi
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "# installing OpenMPI (openmpi-bin, libopenmpi-dev)"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y openmpi-bin libopenmpi-dev
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/mpi_allreduce_bench" "$here/mpi_allreduce_bench.c"

# Ours and OpenMPI alternate per rank count so both see the same machine load.
for n in $ranks; do
  "$ours" --ranks "$n" --ops all_reduce --sizes "${sizes// /,}" | tee "$work/ours_$n.txt"
  mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
    -np "$n" "$work/mpi_allreduce_bench" $sizes | tee "$work/mpi_$n.txt"
done

echo "#"
echo "# all-reduce, float sum, TCP over loopback, one process per rank: busbw in GB/s (nccl-tests definition)"
# ours/mpi: the busbw ratio, from the unrounded times (same bytes, so it is mpi_us / ours_us).
printf "# %6s %12s %12s %12s %12s %12s %8s\n" ranks size ours_us ours_busbw mpi_us mpi_busbw ours/mpi
for n in $ranks; do
  # Data rows start with a space; fields: size count type redop time algbw busbw wrong.
  join <(awk '/^ /{print $1, $5, $7}' "$work/ours_$n.txt" | sort) \
       <(awk '/^ /{print $1, $5, $7}' "$work/mpi_$n.txt" | sort) |
    sort -n | awk -v n="$n" '{printf "  %6d %12d %12.1f %12.2f %12.1f %12.2f %8.2f\n", n, $1, $2, $3, $4, $5, ($2 > 0 ? $4 / $2 : 0)}'
done
