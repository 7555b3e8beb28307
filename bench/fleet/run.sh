#!/usr/bin/env bash
# The fleet simulator against a fresh daemon: starts trainyard-daemon on
# 127.0.0.1:0 with SQLite in a new data dir, runs fleet_sim with NODES virtual agents, prints the
# figures and the machine's load, and stops the daemon.
#
#   bench/fleet/run.sh [BUILD_DIR] NODES [fleet_sim flags, e.g. --rate 50 --steady-s 60]
#   (default BUILD_DIR: ./build; build first: ninja -C BUILD_DIR trainyard-daemon fleet_sim)
#
# The documented run (bench/fleet/RESULTS.md) is
#   bench/fleet/run.sh NODES --rate 50 --steady-s 150 --job-ms 3000
# with the daemon's default health settings: the steady phase runs well past the first periodic
# health check (--health-first-check-s, 60 s after the daemon starts), so its figures include the
# periodic checks' rotation, not only the quiet before it.
#
# Each agent is one WebSocket, one descriptor in the simulator and one in the daemon: both
# processes need NODES + a few hundred open files. The script raises the soft limit to the hard
# one and refuses a NODES it cannot hold, rather than measuring a fleet that silently lost nodes
# (raising the hard limit takes root with CAP_SYS_RESOURCE: `ulimit -Hn`, /etc/security/limits.conf).
# The daemon's connection caps are raised to fit; the agents come from 127.0.0.2 upwards (1,000 per
# address), so one address's ephemeral ports never run out. KEEP_DATA=1 keeps the data dir and log.
# PRIORITY=-10 runs the daemon and the simulator at that nice value (root only): on a machine shared
# with busy builds, latencies otherwise measure the wait for a CPU more than the daemon's own work.
# DAEMON_FLAGS="..." adds daemon flags (word-split), e.g. DAEMON_FLAGS="--health-interval-s 0" for a
# run without periodic health checks to compare with.
set -euo pipefail

build_dir=build
if [[ $# -gt 0 && ! "$1" =~ ^[0-9]+$ ]]; then build_dir="$1"; shift; fi
nodes="${1:?usage: run.sh [BUILD_DIR] NODES [fleet_sim flags]}"
shift
daemon="$build_dir/daemon/trainyard-daemon"
sim="$build_dir/bench/fleet/fleet_sim"
for binary in "$daemon" "$sim"; do
  if [[ ! -x "$binary" ]]; then
    echo "run.sh: $binary not found; build it first: ninja -C $build_dir trainyard-daemon fleet_sim" >&2
    exit 2
  fi
done

ulimit -n "$(ulimit -Hn)"
needed=$((nodes + 512))
if (( needed > $(ulimit -n) )); then
  echo "run.sh: $nodes nodes need $needed open files per process; the hard limit here is $(ulimit -Hn)" >&2
  exit 2
fi

data="$(mktemp -d -p /var/tmp trainyard-bench-fleet.XXXXXX)"
daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" || true
  fi
  if [[ "${KEEP_DATA:-0}" == 1 ]]; then echo "# data dir and daemon log kept in $data"; else rm -rf "$data"; fi
}
trap cleanup EXIT

read -r -a daemon_flags <<< "${DAEMON_FLAGS:-}"
nice -n "${PRIORITY:-0}" "$daemon" --listen 127.0.0.1:0 --data-dir "$data" --max-connections "$needed" --max-connections-per-ip 100000 \
  "${daemon_flags[@]+"${daemon_flags[@]}"}" >"$data/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 300); do
  [[ -s "$data/daemon.addr" ]] && break
  kill -0 "$daemon_pid" 2>/dev/null || { echo "run.sh: the daemon exited; its log:" >&2; cat "$data/daemon.log" >&2; exit 1; }
  sleep 0.1
done
[[ -s "$data/daemon.addr" ]] || { echo "run.sh: the daemon wrote no address within 30 s" >&2; exit 1; }

echo "# daemon $(cat "$data/daemon.addr") pid $daemon_pid, data dir $data, $nodes nodes, open files $(ulimit -n), nice ${PRIORITY:-0}, flags: ${DAEMON_FLAGS:-(defaults)}"
echo "# machine: $(nproc) cores, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
nice -n "${PRIORITY:-0}" "$sim" --data-dir "$data" --daemon-pid "$daemon_pid" --nodes "$nodes" "$@" || status=$?
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
