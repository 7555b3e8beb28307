#!/usr/bin/env bash
# The build a packager does, and the package: plain CMake (default generator, Release, GCC, no
# TRAINYARD_WERROR) in build-package/, and the same with Clang in build-package-clang/ (compiled
# only: the package is GCC's), of the three binaries and the libraries under them: GCC compiles the
# tests and benchmarks in the release build, and Clang the tests in the sanitized build (both with
# warnings as errors); then `cmake --install` into a staging directory, the installed binaries' --version and
# --print-config over the installed example configs, `cpack -G DEB` checked with dpkg-deb, and
# `systemd-analyze verify` of the units when systemd-analyze is there.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-package
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack's install step would otherwise build every target.
CXX=g++ cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON > /dev/null
cmake --build "$dir" -j "$(nproc)" --target trainyard-daemon trainyard-agent trainyard
# A packager may build with Clang as well. The ccache launcher comes from CMakeLists.txt, as for the
# other builds.
CC=clang CXX=clang++ cmake -S . -B build-package-clang -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build-package-clang -j "$(nproc)" --target trainyard-daemon trainyard-agent trainyard

fail() { echo "package-check: $*" >&2; exit 1; }
stage="$PWD/$dir/stage"
rm -rf "$stage"
DESTDIR="$stage" cmake --install "$dir" --prefix /usr > /dev/null
for f in usr/bin/trainyard-daemon usr/bin/trainyard-agent usr/bin/trainyard \
         usr/share/doc/trainyard/examples/daemon.json usr/share/doc/trainyard/examples/agent.json \
         usr/share/doc/trainyard/examples/agent-node.env \
         usr/lib/systemd/system/trainyard-daemon.service "usr/lib/systemd/system/trainyard-agent@.service" \
         usr/lib/sysusers.d/trainyard.conf usr/share/trainyard/dashboard/index.html \
         usr/share/trainyard/grafana/trainyard.json usr/share/trainyard/prometheus/trainyard-alerts.yml \
         usr/lib/python3/dist-packages/trainyard/__init__.py; do
  [ -e "$stage/$f" ] || fail "cmake --install did not install $f"
done
compgen -G "$stage/usr/share/doc/trainyard/decisions/001-*" > /dev/null || fail "cmake --install did not install the decision records"
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# Outputs are captured before grep -q reads them: under pipefail, a writer cut off by grep's early
# exit would fail the check.
for b in trainyard-daemon trainyard-agent trainyard; do
  version=$("$stage/usr/bin/$b" --version)
  grep -qx "$b [0-9.]* (commit $commit)" <<< "$version" || fail "$b --version: $version"
done
examples="$stage/usr/share/doc/trainyard/examples"
printed=$("$stage/usr/bin/trainyard-daemon" --config "$examples/daemon.json" --print-config)
grep -q '"data-dir": "/var/lib/trainyard", *// file' <<< "$printed" || fail "daemon.json does not read back: $printed"
printed=$("$stage/usr/bin/trainyard-agent" --config "$examples/agent.json" --name n1 --work-dir /nonexistent --print-config)
grep -q '"name": "n1", *// flag --name' <<< "$printed" || fail "agent.json does not read back: $printed"

rm -f "$dir"/trainyard_*.deb
(cd "$dir" && cpack -G DEB > /dev/null)
deb=$(ls "$dir"/trainyard_*.deb)
info=$(dpkg-deb -I "$deb")
grep -q "Package: trainyard" <<< "$info" || fail "$deb: no Package field"
grep -q "Depends:.*libspdlog" <<< "$info" || fail "$deb: no library dependencies"
grep -q " postinst" <<< "$info" || fail "$deb: no postinst"
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/trainyard-daemon ./usr/bin/trainyard-agent ./usr/bin/trainyard \
         ./usr/share/doc/trainyard/examples/agent.json ./usr/lib/systemd/system/trainyard-agent@.service \
         ./usr/share/trainyard/dashboard/index.html ./usr/share/trainyard/grafana/trainyard.json \
         ./usr/share/trainyard/prometheus/trainyard-alerts.yml ./usr/lib/python3/dist-packages/trainyard/__init__.py; do
  grep -q " $f$" <<< "$contents" || fail "$deb lacks $f"
done

if command -v systemd-analyze > /dev/null; then
  # The units name /usr/bin/...: verify copies naming the staged binaries. verify exits 0 on unknown
  # keys and bad values (it only prints them), so any output fails the check.
  units="$PWD/$dir/units"
  rm -rf "$units" && mkdir -p "$units"
  for u in trainyard-daemon.service trainyard-agent@.service; do
    sed "s|/usr/bin/|$stage/usr/bin/|" "$stage/usr/lib/systemd/system/$u" > "$units/$u"
  done
  verdict=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$units/trainyard-daemon.service" \
            "$units/trainyard-agent@n1.service" 2>&1) || true
  [ -z "$verdict" ] || fail "systemd-analyze verify: $verdict"
fi
echo "package-check: $(basename "$deb") ok ($(du -k "$deb" | cut -f1) KiB)"
