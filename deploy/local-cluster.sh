#!/usr/bin/env bash
# A local Trainyard cluster on loopback: the daemon on embedded SQLite and N agents, with all their
# files under .trainyard/ (data/, agents/, *.log, *.pid).
#   deploy/local-cluster.sh start [AGENTS]   (default 4)
#   deploy/local-cluster.sh stop
#   deploy/local-cluster.sh status
set -euo pipefail
cd "$(dirname "$0")/.."
root=.trainyard
bin=build
cmd=${1:-status}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

case "$cmd" in
  start)
    agents=${2:-4}
    mkdir -p "$root"
    if running "$root/daemon.pid"; then echo "daemon already running at $(cat "$root/daemon.addr")"; exit 0; fi
    rm -f "$root/data/daemon.addr"
    # Every agent shares this one host's cores, so concurrent pair tests of a health check slow each
    # other down 2-3x: judge busbw at 10% of the median here, not the 50% meant for real nodes.
    "$bin/daemon/trainyard-daemon" --listen 127.0.0.1:0 --data-dir "$root/data" --heartbeat-interval-ms 1000 \
      --node-timeout-ms 10000 --suspect-pct 10 >> "$root/daemon.log" 2>&1 &
    echo $! > "$root/daemon.pid"
    for _ in $(seq 1 200); do [ -f "$root/data/daemon.addr" ] && break; sleep 0.05; done
    [ -f "$root/data/daemon.addr" ] || { echo "daemon did not start; see $root/daemon.log" >&2; exit 1; }
    cp "$root/data/daemon.addr" "$root/daemon.addr"
    cp "$root/data/admin.token" "$root/admin.token"
    chmod 600 "$root/admin.token"
    url=$(cat "$root/daemon.addr")
    for i in $(seq 1 "$agents"); do
      "$bin/agent/trainyard-agent" --server "$url" --join-token-file "$root/data/join.token" --name "node-$i" \
        --cores 32 --label "rack=r$(( (i + 1) / 2 ))" --work-dir "$root/agents/node-$i" \
        --checkpoint-root "$PWD/$root/data/checkpoints" >> "$root/agent-$i.log" 2>&1 &
      echo $! > "$root/agent-$i.pid"
    done
    echo "daemon: $url (log $root/daemon.log), $agents agents"
    ;;
  stop)
    for pid in "$root"/agent-*.pid "$root"/daemon.pid; do
      [ -f "$pid" ] || continue
      running "$pid" && kill "$(cat "$pid")" 2>/dev/null || true
      rm -f "$pid"
    done
    echo "stopped"
    ;;
  status)
    if running "$root/daemon.pid"; then echo "daemon running at $(cat "$root/daemon.addr")"; else echo "daemon not running"; fi
    ;;
  *) echo "usage: $0 start [AGENTS] | stop | status" >&2; exit 2 ;;
esac
