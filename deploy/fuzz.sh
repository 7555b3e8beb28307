#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) in the sanitized build (deploy/build.sh asan: Clang with ASan +
# UBSan, build-asan/) and runs each for SECONDS (default 60), starting from its committed seed corpus
# under fuzz/corpus/<target>/. Fails if any target crashes, leaks or trips a sanitizer; the input
# that did is saved under build-asan/fuzz-artifacts/. New inputs found go to
# build-asan/fuzz-corpus/<target>/, never into fuzz/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
targets=(job_spec job_array messages http_target failure_rules checkpoint_manifest config api_request api_failing_store)

deploy/build.sh asan fuzzers

mkdir -p build-asan/fuzz-artifacts
failed=()
for t in "${targets[@]}"; do
  mkdir -p "build-asan/fuzz-corpus/$t"
  log="build-asan/fuzz-$t.log"
  status=0
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
    "build-asan/fuzz/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="build-asan/fuzz-artifacts/$t-" \
    "build-asan/fuzz-corpus/$t" "fuzz/corpus/$t" > "$log" 2>&1 || status=$?
  # The last status line holds the coverage reached: "#N DONE cov: C ft: F corp: ...".
  coverage=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || echo "cov: ? ft: ?")
  execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $t ok: $execs executions in ${seconds} s, $coverage"
  else
    echo "fuzz: $t FAILED (exit $status): $execs executions, $coverage; log $log, input under build-asan/fuzz-artifacts/" >&2
    grep -E 'ERROR|SUMMARY|runtime error|terminate|#[0-9]+ 0x' "$log" | head -n 20 >&2 || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
