#!/usr/bin/env bash
# A local Trainyard cluster on loopback: the daemon on embedded SQLite and N agents, with all their
# files under .trainyard/ (data/, agents/, *.log, *.pid). Run as root, the agents run each job as an
# account of its own (README "What a job runs as"), which must reach the job's directories: from a
# checkout those accounts cannot reach (under /root, or a home directory of mode 0700) the agents'
# work directories and the checkpoints go to /var/tmp/trainyard-local-<hash of the checkout's
# path>/ instead.
#   deploy/local-cluster.sh start [--tls] [AGENTS]   (default 4)
#   deploy/local-cluster.sh stop
#   deploy/local-cluster.sh status
# --tls: a throwaway CA and certificates (deploy/tls-certs.sh, in .trainyard/tls/); the daemon serves
# HTTPS and wss, agents verify it and present client certificates (mutual TLS), and the CLI run from
# here trusts .trainyard/ca.pem.
set -euo pipefail
cd "$(dirname "$0")/.."
root=.trainyard
bin=build
tls=0
args=()
for arg in "$@"; do
  if [[ $arg == --tls ]]; then tls=1; else args+=("$arg"); fi
done
set -- "${args[@]+"${args[@]}"}"
cmd=${1:-status}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

case "$cmd" in
  start)
    agents=${2:-4}
    mkdir -p "$root"
    if running "$root/daemon.pid"; then echo "daemon already running at $(cat "$root/daemon.addr")"; exit 0; fi
    rm -f "$root/data/daemon.addr" "$root/ca.pem"
    daemon_tls=()
    if [[ $tls == 1 ]]; then
      names=()
      for i in $(seq 1 "$agents"); do names+=("node-$i"); done
      deploy/tls-certs.sh "$root/tls" "${names[@]}"
      daemon_tls=(--tls-cert "$root/tls/server.pem" --tls-key "$root/tls/server.key" --agent-client-ca "$root/tls/ca.pem")
    fi
    work_root="$PWD/$root/agents"
    checkpoints="$PWD/$root/data/checkpoints"
    daemon_checkpoints=()
    if [ "$(id -u)" -eq 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$PWD/$root"; then
      elsewhere="/var/tmp/trainyard-local-$(printf '%s' "$PWD" | sha256sum | cut -c1-12)"
      mkdir -p "$elsewhere"
      chmod 0711 "$elsewhere"
      work_root="$elsewhere/agents"
      checkpoints="$elsewhere/checkpoints"
      daemon_checkpoints=(--checkpoint-root "$checkpoints")
      echo "jobs' files: $elsewhere (the accounts jobs run as cannot reach $PWD/$root)"
    fi
    # Every agent shares this one host's cores, so concurrent pair tests of a health check slow each
    # other down 2-3x: judge busbw at 10% of the median here, not the 50% meant for real nodes.
    # Its address known before it starts, so that webhook messages link to the dashboard
    # (--public-url): a port free now, which the daemon binds at once.
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    scheme=http
    [[ $tls == 1 ]] && scheme=https
    "$bin/daemon/trainyard-daemon" --listen "127.0.0.1:$port" --public-url "$scheme://127.0.0.1:$port" \
      --data-dir "$root/data" --heartbeat-interval-ms 1000 \
      --node-timeout-ms 10000 --kill-grace-ms 3000 --suspect-pct 10 --dashboard-dir web/dist "${daemon_tls[@]+"${daemon_tls[@]}"}" \
      "${daemon_checkpoints[@]+"${daemon_checkpoints[@]}"}" >> "$root/daemon.log" 2>&1 &
    echo $! > "$root/daemon.pid"
    for _ in $(seq 1 200); do [ -f "$root/data/daemon.addr" ] && break; sleep 0.05; done
    [ -f "$root/data/daemon.addr" ] || { echo "daemon did not start; see $root/daemon.log" >&2; exit 1; }
    cp "$root/data/daemon.addr" "$root/daemon.addr"
    cp "$root/data/admin.token" "$root/admin.token"
    chmod 600 "$root/admin.token"
    [[ $tls == 1 ]] && cp "$root/tls/ca.pem" "$root/ca.pem"
    url=$(cat "$root/daemon.addr")
    for i in $(seq 1 "$agents"); do
      agent_tls=()
      [[ $tls == 1 ]] && agent_tls=(--ca-file "$root/tls/ca.pem" --tls-cert "$root/tls/agent-node-$i.pem"
                                    --tls-key "$root/tls/agent-node-$i.key")
      "$bin/agent/trainyard-agent" --server "$url" "${agent_tls[@]+"${agent_tls[@]}"}" --join-token-file "$root/data/join.token" --name "node-$i" \
        --cores 32 --label "rack=r$(( (i + 1) / 2 ))" --work-dir "$work_root/node-$i" \
        --checkpoint-root "$checkpoints" >> "$root/agent-$i.log" 2>&1 &
      echo $! > "$root/agent-$i.pid"
    done
    echo "daemon: $url (log $root/daemon.log), $agents agents; dashboard: $url/ (token: $root/admin.token)"
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
  *) echo "usage: $0 start [--tls] [AGENTS] | stop | status" >&2; exit 2 ;;
esac
