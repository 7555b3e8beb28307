#!/usr/bin/env bash
# Installs what Trainyard needs to build and test, from Debian 12's packages, if it is missing.
set -euo pipefail
packages=(build-essential cmake ninja-build ccache pkg-config libboost1.81-dev nlohmann-json3-dev libspdlog-dev
          libsqlite3-dev libpq-dev libssl-dev openssl libgtest-dev libgmock-dev curl python3 clang libclang-rt-14-dev
          postgresql   # initdb and pg_ctl: the store tests and benchmarks start a throwaway server
          prometheus   # promtool: checks the /metrics scrape, the alert rules and the Grafana board's queries
          chromium)    # the dashboard's browser tests (Playwright drives Debian's chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node 20 and its own npm come with the machine; Debian's npm conflicts with that node, so it is never
# installed from apt: without them the dashboard cannot be built, and we say so.
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  echo "install-deps: Node.js 20 with its npm is needed for the dashboard (web/); install it from nodejs.org" >&2
  exit 1
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
