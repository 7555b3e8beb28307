#!/usr/bin/env bash
# Installs what Trainyard needs, from Debian 12's packages, if it is missing.
#   deploy/install-deps.sh build   what building it and running a local cluster need (the quick start)
#   deploy/install-deps.sh [test]  that, and the tools only the tests use (the test command, CI)
# The build set comes without Debian's recommended extras: a quick start on a fresh machine waits for
# no database server, browser or monitoring stack, nor the services they would enable.
set -euo pipefail
mode=${1:-test}
build_packages=(build-essential cmake ninja-build ccache pkg-config libboost1.81-dev nlohmann-json3-dev libspdlog-dev
                libsqlite3-dev libpq-dev libssl-dev openssl python3
                libgtest-dev libgmock-dev)  # CMake configures the test targets beside the programs
test_packages=(curl clang libclang-rt-14-dev  # the fuzz targets (libFuzzer)
               postgresql   # initdb and pg_ctl: the store tests and benchmarks start a throwaway server
               prometheus   # promtool: checks the /metrics scrape, the alert rules and the Grafana board's queries
               chromium     # the dashboard's browser tests (Playwright drives Debian's chromium)
               python3-torch)  # real PyTorch jobs (DDP over gloo) in the integration tests, run by /usr/bin/python3
case "$mode" in
  build) wanted=("${build_packages[@]}") ;;
  test) wanted=("${build_packages[@]}" "${test_packages[@]}") ;;
  *) echo "install-deps: unknown set '$mode' (build or test)" >&2; exit 2 ;;
esac
missing_build=()
missing_test=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  if [[ " ${build_packages[*]} " == *" $p "* ]]; then missing_build+=("$p"); else missing_test+=("$p"); fi
done
# Node 20 and its own npm come with the machine; Debian's npm conflicts with that node, so it is never
# installed from apt: without them the dashboard cannot be built, and we say so.
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  echo "install-deps: Node.js 20 with its npm is needed for the dashboard (web/); install it from nodejs.org" >&2
  exit 1
fi
if [ ${#missing_build[@]} -eq 0 ] && [ ${#missing_test[@]} -eq 0 ]; then
  echo "install-deps: everything for '$mode' is installed"
  exit 0
fi
echo "install-deps: installing ${missing_build[*]} ${missing_test[*]}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
if [ ${#missing_build[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing_build[@]}"
fi
# The test tools keep their recommends: chromium's fonts, for one, draw the screenshots' text.
if [ ${#missing_test[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing_test[@]}"
fi
