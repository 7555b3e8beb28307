#!/usr/bin/env bash
# Configures and builds one flavour: `release` (build/) or `asan` (build-asan/: Clang with
# AddressSanitizer + UndefinedBehaviorSanitizer and coverage instrumentation, for the unit tests and
# the libFuzzer targets of fuzz/ alike; no benchmarks). Extra arguments are ninja targets.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
shift || true
case "$flavour" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINYARD_BUILD_BENCH=ON) ;;
  asan) dir=build-asan
        # Debian 12's clang-14 with its sanitizer and libFuzzer runtimes (libclang-rt-14-dev).
        for p in clang libclang-rt-14-dev; do
          dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            { echo "build.sh: the asan flavour needs $p (deploy/install-deps.sh test installs it)" >&2; exit 1; }
        done
        flags=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DTRAINYARD_SANITIZE=ON -DTRAINYARD_FUZZ=ON
               -DTRAINYARD_BUILD_BENCH=OFF) ;;
  *) echo "build.sh: unknown flavour '$flavour' (release or asan)" >&2; exit 2 ;;
esac
# The dashboard (web/ -> web/dist, gzipped twins and the first-load figure) whenever its sources or
# lockfile are newer than the last build; its node_modules whenever the lockfile is newer than them.
build_dashboard() {
  command -v npm > /dev/null || { echo "build.sh: npm is missing: the dashboard (web/) needs Node.js 20 with its npm, from nodejs.org" >&2; exit 1; }
  if [ ! -f web/node_modules/.package-lock.json ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
    (cd web && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if [ ! -f web/dist/index.html ] || [ -n "$(find web/src web/public web/index.html web/vite.config.ts web/package-lock.json \
       web/scripts -newer web/dist/index.html -print -quit)" ]; then
    (cd web && npm run --silent build)
  fi
}
build_dashboard
# ccache hits across clones of the repository (CI builds a fresh clone): paths relative to here.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B "$dir" -G Ninja -DTRAINYARD_WERROR=ON -DTRAINYARD_LINE_TABLES_ONLY=ON "${flags[@]}" > /dev/null
ninja -C "$dir" "$@"
