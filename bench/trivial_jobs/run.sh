#!/usr/bin/env bash
# Trivial jobs end to end (targets: <= 1.5 ms agent CPU and <= 0.5 ms daemon CPU
# per job, >= 1,000 jobs/s on a 2-core machine): starts a fresh trainyard-daemon and 4 agents with
# 16 cores each on 127.0.0.1 ephemeral ports, runs trivial_jobs_bench against them, prints the
# figures and the load, and stops what it started.
#
#   bench/trivial_jobs/run.sh [BUILD_DIR] [trivial_jobs_bench flags, e.g. --jobs 2000 --connections 8]
#   (default BUILD_DIR: ./build; build first: ninja -C BUILD_DIR trainyard-daemon trainyard-agent trivial_jobs_bench)
#   AGENTS=N CORES=N change the fleet; DATA_ROOT=DIR where the data dir is made; JOB_FILES_ROOT=DIR
#   puts the jobs' files (the agents' work dirs with each job's directory and log, and the
#   checkpoint root with each command job's checkpoint directory) there instead; KEEP_DATA=1 keeps the
#   data dir and logs; PROFILE=FILE records the daemon with `perf record -g` into FILE while the
#   jobs run.
#
# The data dir lives under DATA_ROOT (default /var/tmp: a real disk where /tmp may be tmpfs; the
# store's commits are durable, as in production). Each job makes two directories and a log file, so
# the filesystem's inode allocation is part of the agents' CPU. On this
# project's machines (ext4 without a journal) that cost 1.3-2.0 ms of kernel time per directory and
# file in a directory whose block group had lately freed many inodes, as every run's cleanup does,
# and 35 us in one that had not (bench/trivial_jobs/RESULTS.md "Fifth round").
set -euo pipefail

build_dir="${1:-build}"
[[ $# -gt 0 ]] && shift
daemon="$build_dir/daemon/trainyard-daemon"
agent="$build_dir/agent/trainyard-agent"
bench="$build_dir/bench/trivial_jobs/trivial_jobs_bench"
for binary in "$daemon" "$agent" "$bench"; do
  if [[ ! -x "$binary" ]]; then
    echo "run.sh: $binary not found; build it first: ninja -C $build_dir trainyard-daemon trainyard-agent trivial_jobs_bench" >&2
    exit 2
  fi
done
agents="${AGENTS:-4}"
cores="${CORES:-16}"

data="$(mktemp -d -p "${DATA_ROOT:-/var/tmp}" trainyard-bench-trivial.XXXXXX)"
chmod 711 "$data"  # an agent run as root starts jobs as nobody, who must reach its attempt directory
job_files="$data"
if [[ -n "${JOB_FILES_ROOT:-}" ]]; then
  job_files="$(mktemp -d -p "$JOB_FILES_ROOT" trainyard-bench-trivial-jobs.XXXXXX)"
  chmod 711 "$job_files"
fi
pids=()
cleanup() {
  for pid in "${pids[@]+"${pids[@]}"}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]+"${pids[@]}"}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [[ "${KEEP_DATA:-0}" == 1 ]]; then
    echo "# data dir and logs kept in $data (the jobs' files in $job_files)"
  else
    rm -rf "$data" "$job_files"
  fi
}
trap cleanup EXIT

# Attempt logs at info level cost what they cost in production; keep them.
# No canary and no periodic health checks: they would compete with the jobs being measured.
"$daemon" --listen 127.0.0.1:0 --data-dir "$data/daemon" --checkpoint-root "$job_files/checkpoints" --canary-interval-s 0 \
  --health-interval-s 0 >"$data/daemon.log" 2>&1 &
daemon_pid=$!
pids+=("$daemon_pid")
for _ in $(seq 300); do
  [[ -s "$data/daemon/daemon.addr" ]] && break
  kill -0 "$daemon_pid" 2>/dev/null || { echo "run.sh: the daemon exited; its log:" >&2; cat "$data/daemon.log" >&2; exit 1; }
  sleep 0.1
done
[[ -s "$data/daemon/daemon.addr" ]] || { echo "run.sh: the daemon wrote no address within 30 s" >&2; exit 1; }
server="$(cat "$data/daemon/daemon.addr")"

agent_pids=()
for n in $(seq "$agents"); do
  "$agent" --server "$server" --join-token-file "$data/daemon/join.token" --name "node-$n" --cores "$cores" \
    --work-dir "$job_files/agent-$n" >"$data/agent-$n.log" 2>&1 &
  agent_pids+=($!)
  pids+=($!)
done

echo "# daemon $server pid $daemon_pid; $agents agents x $cores cores, pids ${agent_pids[*]}; data dir $data; the jobs' files in $job_files"
echo "# machine: $(nproc) cores, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -n "${PROFILE:-}" ]]; then
  perf record -e cpu-clock -F 999 --call-graph dwarf,16384 -p "$daemon_pid" -o "$PROFILE" >"$data/perf.log" 2>&1 &
  pids+=($!)
fi
"$bench" --data-dir "$data/daemon" --daemon-pid "$daemon_pid" --agent-pids "$(IFS=,; echo "${agent_pids[*]}")" "$@"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
