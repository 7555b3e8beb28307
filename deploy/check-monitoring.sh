#!/usr/bin/env bash
# Checks what deploy/ gives Prometheus and Grafana, with Prometheus's own promtool (Debian package
# prometheus): the alert rules and their unit tests, the scrape example, and every query of the
# Grafana board (each one parsed as a recording rule, with Grafana's $__rate_interval as 5m).
# That the metrics they name exist is the integration test Metrics.* (a real scrape).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v promtool > /dev/null; then
  echo "check-monitoring: promtool is missing (apt-get install prometheus, or deploy/install-deps.sh)" >&2
  exit 1
fi
promtool check rules prometheus/trainyard-alerts.yml
promtool test rules prometheus/trainyard-alerts.test.yml

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo placeholder > "$tmp/trainyard.token"
sed "s|/etc/prometheus/trainyard.token|$tmp/trainyard.token|" prometheus/prometheus.yml > "$tmp/prometheus.yml"
cp prometheus/trainyard-alerts.yml "$tmp/"
promtool check config "$tmp/prometheus.yml"

python3 - grafana/trainyard.json "$tmp/board-queries.yml" <<'PY'
import json, sys
board = json.load(open(sys.argv[1]))
ids, rules, panels = set(), [], 0
for panel in board["panels"]:
    assert panel["id"] not in ids, f"panel id {panel['id']} twice"
    ids.add(panel["id"])
    if panel["type"] == "row":
        continue
    panels += 1
    assert panel.get("targets"), f"panel {panel['title']!r} has no query"
    for target in panel["targets"]:
        expr = target["expr"].replace("$__rate_interval", "5m")
        rules.append({"record": f"board:panel_{panel['id']}:{target['refId']}", "expr": expr})
json.dump({"groups": [{"name": "board", "rules": rules}]}, open(sys.argv[2], "w"))
print(f"check-monitoring: {len(rules)} queries in {panels} panels of {sys.argv[1]}")
PY
promtool check rules "$tmp/board-queries.yml"
echo "check-monitoring: ok"
