#!/usr/bin/env bash
# One user flooding catch-up streams (the rule: no user's catch-up may hold the store worker so long
# that other users' requests wait): starts a fresh trainyard-daemon (data under /var/tmp), fills its
# event log with EVENTS job.submitted events (bench_submit, jobs that wait for capacity), then
# prints GET /v1/jobs latency alone and while one user opens STREAMS_PER_S catch-up streams a second.
#
#   bench/stream_flood/run.sh [BUILD_DIR]   (env: EVENTS=27000 STREAMS_PER_S=20 SECONDS=20)
#   build first: ninja -C BUILD_DIR trainyard-daemon bench_submit stream_flood_bench
#   DAEMON=path/to/another/trainyard-daemon measures that daemon (an older build: before and after).
set -euo pipefail

build_dir="${1:-build}"
events="${EVENTS:-27000}"
streams_per_s="${STREAMS_PER_S:-20}"
seconds="${SECONDS_EACH:-20}"
daemon="${DAEMON:-$build_dir/daemon/trainyard-daemon}"
submit="$build_dir/bench/submit/bench_submit"
flood="$build_dir/bench/stream_flood/stream_flood_bench"
for binary in "$daemon" "$submit" "$flood"; do
  [[ -x "$binary" ]] || { echo "run.sh: $binary not found; build it first" >&2; exit 2; }
done

data="$(mktemp -d -p /var/tmp trainyard-bench-stream-flood.XXXXXX)"
daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then kill -TERM "$daemon_pid"; wait "$daemon_pid" || true; fi
  if [[ "${KEEP_DATA:-0}" == 1 ]]; then echo "# data dir and logs kept in $data"; else rm -rf "$data"; fi
}
trap cleanup EXIT

"$daemon" --listen 127.0.0.1:0 --data-dir "$data" --max-pending-per-user 0 >"$data/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 300); do
  [[ -s "$data/daemon.addr" ]] && break
  kill -0 "$daemon_pid" 2>/dev/null || { echo "run.sh: the daemon exited; its log:" >&2; cat "$data/daemon.log" >&2; exit 1; }
  sleep 0.1
done
echo "# daemon $daemon $(cat "$data/daemon.addr") pid $daemon_pid; $(nproc) cores, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$submit" --data-dir "$data" --daemon-pid "$daemon_pid" --jobs "$events" --connections 16 > /dev/null
echo "# event log filled: $events jobs submitted"
echo "## GET /v1/jobs alone"
"$flood" --data-dir "$data" --streams-per-s 0 --seconds "$seconds"
echo "## GET /v1/jobs while one user opens $streams_per_s catch-up streams a second"
"$flood" --data-dir "$data" --streams-per-s "$streams_per_s" --seconds "$seconds"
