#!/usr/bin/env bash
# Checks that no include crosses the folder map and that every doc link and cited section exists,
# installs what is missing, checks the Prometheus rules
# and the Grafana board, builds, and runs every test: all of them (unit + integration) on the release
# build, validates the OpenAPI document and the tests' API traffic against it, checks that the
# dashboard's API types are generated from it, runs the dashboard's unit and browser tests, then the
# packager's plain Release builds (GCC, and Clang) with the install and .deb checks, then the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer, then each
# fuzz target for 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
deploy/check-includes.sh
deploy/install-deps.sh test
deploy/check-docs.sh
deploy/check-monitoring.sh
deploy/build.sh release
# The integration tests record every request they make of the API and its answer (api-traffic/).
rm -rf build/api-traffic && mkdir -p build/api-traffic
(cd build && TRAINYARD_API_TRAFFIC_DIR="$PWD/api-traffic" ctest --output-on-failure --timeout 300 -j2)
# The API's OpenAPI document (as GET /v1/openapi.json serves it), validated against the OpenAPI 3.1
# schema by @seriousme/openapi-schema-validator; then the recorded traffic checked against it by Ajv
# (both pinned in deploy/openapi/package-lock.json).
TRAINYARD_OPENAPI_OUT="$PWD/build/openapi.json" build/tests/unit/daemon/daemon_test \
  --gtest_filter=ApiTest.TheOpenApiDocumentIsServedWithoutAToken > /dev/null
(cd deploy/openapi && npm ci --no-audit --no-fund --silent && node validate.mjs ../../build/openapi.json &&
  node validate-traffic.mjs ../../build/openapi.json ../../build/api-traffic)
# The dashboard's API types (web/src/logic/api.gen.ts) are generated from that document by a pinned
# openapi-typescript; a document change not carried over to them fails here.
(cd web && npm run -s api-types -- --check ../build/openapi.json)
# The dashboard: Vitest unit tests of its view logic, then Playwright (playwright-core) driving
# Debian's chromium headless against a real daemon and agents the test starts on loopback ports;
# screenshots of each view land in build/dashboard-e2e/.
(cd web && npm test --silent && node e2e/run.mjs)
deploy/package-check.sh
deploy/build.sh asan unit_tests
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -L unit --timeout 300 -j2)
deploy/fuzz.sh 30
echo "test-all: done in $(( $(date +%s) - start )) s"
