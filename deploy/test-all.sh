#!/usr/bin/env bash
# Checks that no include crosses the folder map and that every doc link and cited section exists,
# installs what is missing, checks the Prometheus rules
# and the Grafana board, builds, and runs every test: all of them (unit + integration) on the release
# build, validates the OpenAPI document and the tests' API traffic against it, checks that the
# dashboard's API types are generated from it, runs the dashboard's unit and browser tests, then the
# packager's plain Release builds (GCC, and Clang) with the install and .deb checks, then, in one
# Clang build with AddressSanitizer + UndefinedBehaviorSanitizer, the unit tests again and each fuzz
# target for 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
last=$start
# How long each stage took, so a slow one is seen in CI's log.
lap() {
  local now
  now=$(date +%s)
  echo "test-all: $1 took $((now - last)) s"
  last=$now
}
deploy/check-includes.sh
deploy/install-deps.sh test
deploy/check-docs.sh
deploy/check-monitoring.sh
lap "checks and dependencies"
deploy/build.sh release
lap "release build"
# The integration tests record every request they make of the API and its answer (api-traffic/).
rm -rf build/api-traffic && mkdir -p build/api-traffic
(cd build && TRAINYARD_API_TRAFFIC_DIR="$PWD/api-traffic" ctest --output-on-failure --timeout 300 -j2)
lap "tests on the release build"
# The API's OpenAPI document (as GET /v1/openapi.json serves it), validated against the OpenAPI 3.1
# schema by @seriousme/openapi-schema-validator; then the recorded traffic checked against it by Ajv
# (both pinned in deploy/openapi/package-lock.json).
TRAINYARD_OPENAPI_OUT="$PWD/build/openapi.json" build/tests/unit/daemon/daemon_test \
  --gtest_filter=ApiTest.TheOpenApiDocumentIsServedWithoutAToken > /dev/null
(cd deploy/openapi && npm ci --no-audit --no-fund --loglevel=error && node validate.mjs ../../build/openapi.json &&
  node validate-traffic.mjs ../../build/openapi.json ../../build/api-traffic)
# The dashboard's API types (web/src/logic/api.gen.ts) are generated from that document by a pinned
# openapi-typescript; a document change not carried over to them fails here.
(cd web && npm run -s api-types -- --check ../build/openapi.json)
lap "OpenAPI checks"
# The dashboard: Vitest unit tests of its view logic, then Playwright (playwright-core) driving
# Debian's chromium headless against a real daemon and agents the test starts on loopback ports;
# screenshots of each view land in build/dashboard-e2e/.
(cd web && npm test --silent && node e2e/run.mjs)
lap "dashboard tests"
deploy/package-check.sh
lap "package check"
deploy/build.sh asan unit_tests fuzzers
lap "ASan build"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -L unit --timeout 300 -j2)
lap "ASan unit tests"
deploy/fuzz.sh 30
lap "fuzzing"
echo "test-all: done in $(( $(date +%s) - start )) s"
