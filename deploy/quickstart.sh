#!/usr/bin/env bash
# Quick start: installs what is missing, builds, starts a local cluster (daemon + 4 agents on
# loopback) and runs a demo 2-node simulated training job to completion.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh build
deploy/build.sh release trainyard-daemon trainyard-agent trainyard
deploy/local-cluster.sh start 4
cli=build/cli/trainyard
healthy=0
for _ in $(seq 1 600); do
  healthy=$($cli --json nodes | python3 -c 'import json,sys; print(sum(n["state"]=="HEALTHY" for n in json.load(sys.stdin)["nodes"]))')
  [ "$healthy" -ge 4 ] && break
  sleep 0.1
done
if [ "$healthy" -lt 4 ]; then
  echo "quickstart: $healthy of 4 nodes became HEALTHY in 60 s; the agents' logs end:" >&2
  tail -n 3 .trainyard/agent-*.log >&2
  exit 1
fi
$cli nodes
job=$($cli --json submit deploy/examples/demo-training.json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo "Submitted demo job $job (2-node data-parallel MLP training on the simulated Trainium kernel)"
state=""
for _ in $(seq 1 1200); do
  state=$($cli --json job "$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["state"])')
  case "$state" in SUCCEEDED|FAILED|CANCELLED) break ;; esac
  sleep 0.25
done
$cli job "$job"
$cli logs "$job" --rank 0 --tail 600
echo
echo "Demo job $job: $state"
echo "API:    $(cat .trainyard/daemon.addr)"
echo "Token:  $(pwd)/.trainyard/admin.token (the CLI finds it when run from this directory)"
echo "Dashboard: $(cat .trainyard/daemon.addr)/ (sign in with the token above)"
echo "Try:    build/cli/trainyard jobs --all    |    stop the cluster: deploy/local-cluster.sh stop"
[ "$state" = "SUCCEEDED" ]
