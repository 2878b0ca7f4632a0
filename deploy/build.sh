#!/usr/bin/env bash
# Configures and builds pgwaitprof into ./build (BUILD_DIR to change; BUILD_TARGET to build one
# target instead of everything). Extra arguments go to cmake's configure step, e.g.
# -DPGWAITPROF_SANITIZE=ON or -DCMAKE_BUILD_TYPE=Release.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j "$(nproc)" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
