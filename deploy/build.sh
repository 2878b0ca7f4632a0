#!/usr/bin/env bash
# Configures and builds pgwaitprof into ./build (BUILD_DIR to change; BUILD_TARGET to build some
# targets instead of the default ones, e.g. BUILD_TARGET="pgwaitprof pgwaitprof_bench"). Extra
# arguments go to cmake's configure step, e.g. -DPGWAITPROF_SANITIZE=ON or
# -DCMAKE_BUILD_TYPE=Release. The default is an optimised build with line tables (-O2 -g1: what
# backtraces and sanitizer reports need, at two thirds of the compile time of -g). A new build
# directory uses Ninja when it is installed, and ccache compiles when it is (CMakeLists.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
echo "build.sh: configuring $build (cmake)"
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" "$@" >/dev/null
targets=()
for target in ${BUILD_TARGET:-}; do targets+=(--target "$target"); done
echo "build.sh: building ${BUILD_TARGET:-everything} with $(nproc) jobs"
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
