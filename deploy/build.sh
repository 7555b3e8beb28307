#!/usr/bin/env bash
# Configures and builds one flavour: `release` (build/) or `asan` (build-asan/, AddressSanitizer +
# UndefinedBehaviorSanitizer, unit tests only). Extra arguments are ninja targets.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
shift || true
case "$flavour" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINYARD_BUILD_BENCH=ON) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DTRAINYARD_SANITIZE=ON -DTRAINYARD_BUILD_BENCH=OFF) ;;
  *) echo "build.sh: unknown flavour '$flavour' (release or asan)" >&2; exit 2 ;;
esac
# ccache hits across clones of the repository (CI builds a fresh clone): paths relative to here.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B "$dir" -G Ninja -DTRAINYARD_WERROR=ON "${flags[@]}" > /dev/null
ninja -C "$dir" "$@"
