#!/usr/bin/env bash
# 1,000 concurrent SSE clients (figures in bench/events_stream/RESULTS.md): starts a fresh trainyard-daemon (data under
# /var/tmp, --sse-keepalive-ms 1000 so subscription shows quickly, --max-connections-per-ip 4000
# since every client is on 127.0.0.1, --max-connections-per-user 4000 since every client is the
# admin) and measures, in order:
#   1. submit throughput without stream clients (bench_submit);
#   2. the same with CLIENTS clients connected, each of which must receive every job.submitted
#      event (events_stream_bench --expect), with their event-to-client latency under that load;
#   3. event-to-client latency with CLIENTS clients at a paced PACED_RATE events/s.
#
#   bench/events_stream/run.sh [BUILD_DIR]   (env: CLIENTS=1000 JOBS=5000 CONNECTIONS=16 PACED=1000 PACED_RATE=100)
#   build first: ninja -C BUILD_DIR trainyard-daemon bench_submit events_stream_bench
set -euo pipefail

build_dir="${1:-build}"
clients="${CLIENTS:-1000}"
jobs="${JOBS:-5000}"
connections="${CONNECTIONS:-16}"
paced="${PACED:-1000}"
paced_rate="${PACED_RATE:-100}"
daemon="$build_dir/daemon/trainyard-daemon"
submit="$build_dir/bench/submit/bench_submit"
streams="$build_dir/bench/events_stream/events_stream_bench"
for binary in "$daemon" "$submit" "$streams"; do
  [[ -x "$binary" ]] || { echo "run.sh: $binary not found; build it first" >&2; exit 2; }
done

data="$(mktemp -d -p /var/tmp trainyard-bench-events-stream.XXXXXX)"
daemon_pid=""
streams_pid=""
cleanup() {
  for pid in "$streams_pid" "$daemon_pid"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  done
  if [[ "${KEEP_DATA:-0}" == 1 ]]; then echo "# data dir and logs kept in $data"; else rm -rf "$data"; fi
}
trap cleanup EXIT

"$daemon" --listen 127.0.0.1:0 --data-dir "$data" --sse-keepalive-ms 1000 --max-connections-per-ip 4000 \
  --max-connections-per-user 4000 >"$data/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 300); do
  [[ -s "$data/daemon.addr" ]] && break
  kill -0 "$daemon_pid" 2>/dev/null || { echo "run.sh: the daemon exited; its log:" >&2; cat "$data/daemon.log" >&2; exit 1; }
  sleep 0.1
done
echo "# daemon $(cat "$data/daemon.addr") pid $daemon_pid; $(nproc) cores, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "## 1. submit throughput, no stream clients"
"$submit" --data-dir "$data" --daemon-pid "$daemon_pid" --jobs "$jobs" --connections "$connections"

echo "## 2. submit throughput with $clients stream clients, each receiving every event"
"$streams" --data-dir "$data" --clients "$clients" --expect "$jobs" >"$data/streams.out" 2>&1 &
streams_pid=$!
for _ in $(seq 600); do
  grep -q '^subscribed' "$data/streams.out" && break
  kill -0 "$streams_pid" 2>/dev/null || { cat "$data/streams.out" >&2; exit 1; }
  sleep 0.1
done
"$submit" --data-dir "$data" --daemon-pid "$daemon_pid" --jobs "$jobs" --connections "$connections"
wait "$streams_pid" || echo "# not every client got every event"
streams_pid=""
cat "$data/streams.out"

echo "## 3. latency with $clients stream clients at $paced_rate events/s"
"$streams" --data-dir "$data" --clients "$clients" --submit "$paced" --rate "$paced_rate"
