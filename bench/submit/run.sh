#!/usr/bin/env bash
# Durable submissions per second (target: at least 10,000 jobs/s on a 2-core machine):
# starts a fresh trainyard-daemon on 127.0.0.1:0 with an empty data dir on the local disk, runs
# bench_submit against it (every 201 verified, then the store checked for every job), prints the
# figures and stops the daemon.
#
#   bench/submit/run.sh [BUILD_DIR] [bench_submit flags, e.g. --jobs 50000 --connections 64]
#   (default BUILD_DIR: ./build; build first: ninja -C BUILD_DIR trainyard-daemon bench_submit)
#   TLS=1 bench/submit/run.sh ...   the same over HTTPS: a throwaway CA and certificate
#   (deploy/tls-certs.sh) in the data dir, the daemon with --tls-cert/--tls-key, the bench verifying it
#   STORE=postgresql://... bench/submit/run.sh ...   the daemon on that store (an empty database or
#   schema) rather than SQLite in the data dir
#   CLIENT=wrk [CONNECTIONS=32] [DURATION=20] bench/submit/run.sh BUILD_DIR   the same submissions
#   from wrk (bench/submit/submit.lua) for DURATION seconds; prints the daemon's CPU per 201
#
# The data dir lives under /var/tmp, not /tmp: /tmp may be a tmpfs, where fsync costs nothing and
# "durable" would mean nothing. KEEP_DATA=1 keeps it (and the daemon log) for inspection.
set -euo pipefail

build_dir="${1:-build}"
[[ $# -gt 0 ]] && shift
daemon="$build_dir/daemon/trainyard-daemon"
bench="$build_dir/bench/submit/bench_submit"
for binary in "$daemon" "$bench"; do
  if [[ ! -x "$binary" ]]; then
    echo "run.sh: $binary not found; build it first: ninja -C $build_dir trainyard-daemon bench_submit" >&2
    exit 2
  fi
done

data="$(mktemp -d -p /var/tmp trainyard-bench-submit.XXXXXX)"
daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" || true
  fi
  if [[ "${KEEP_DATA:-0}" == 1 ]]; then echo "# data dir and daemon log kept in $data"; else rm -rf "$data"; fi
}
trap cleanup EXIT

daemon_tls=()
bench_tls=()
if [[ "${TLS:-0}" == 1 ]]; then
  "$(dirname "$0")/../../deploy/tls-certs.sh" "$data/tls"
  daemon_tls=(--tls-cert "$data/tls/server.pem" --tls-key "$data/tls/server.key")
  bench_tls=(--ca-file "$data/tls/ca.pem")
fi
daemon_store=()
[[ -n "${STORE:-}" ]] && daemon_store=(--store "$STORE")
"$daemon" --listen 127.0.0.1:0 --data-dir "$data" "${daemon_tls[@]+"${daemon_tls[@]}"}" \
  "${daemon_store[@]+"${daemon_store[@]}"}" >"$data/daemon.log" 2>&1 &
daemon_pid=$!
# The daemon writes daemon.addr once it listens; give it 30 s.
for _ in $(seq 300); do
  [[ -s "$data/daemon.addr" ]] && break
  kill -0 "$daemon_pid" 2>/dev/null || { echo "run.sh: the daemon exited; its log:" >&2; cat "$data/daemon.log" >&2; exit 1; }
  sleep 0.1
done
[[ -s "$data/daemon.addr" ]] || { echo "run.sh: the daemon wrote no address within 30 s" >&2; exit 1; }

echo "# daemon $(cat "$data/daemon.addr") pid $daemon_pid, data dir $data ($(df -T "$data" | awk 'NR==2 {print $2}'))," \
  "store ${STORE:-sqlite in the data dir}"
echo "# machine: $(nproc) cores, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ "${CLIENT:-bench_submit}" == wrk ]]; then
  # The same submissions from wrk (Debian's wrk, not a project dependency): one thread, 32 keep-alive
  # connections for 20 s by default; the daemon's CPU per 201 is read from /proc around the run.
  cpu_ticks() { awk '{print $14 + $15}' "/proc/$daemon_pid/stat"; }
  before=$(cpu_ticks)
  TRAINYARD_TOKEN="$(head -n1 "$data/admin.token")" wrk -t1 -c"${CONNECTIONS:-32}" -d"${DURATION:-20}s" \
    -s "$(dirname "$0")/submit.lua" "$(cat "$data/daemon.addr")" | tee "$data/wrk.out"
  ticks=$(( $(cpu_ticks) - before ))
  created=$(awk '/^wrk: / {print $2}' "$data/wrk.out")
  awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v n="$created" \
    'BEGIN {printf "daemon cpu: %.2f s (user+system) = %.1f us per accepted job\n", t / hz, n ? t / hz / n * 1e6 : 0}'
else
  "$bench" --data-dir "$data" --daemon-pid "$daemon_pid" "${bench_tls[@]+"${bench_tls[@]}"}" "$@"
fi
