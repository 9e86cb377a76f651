#!/usr/bin/env bash
# Configures and builds disttune with a CMake preset (default: dev; CI uses ci). With ccache on
# the PATH, compiles go through it, so a rebuild of unchanged sources on the same machine is a
# cache hit.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake --preset "$preset" "${launcher[@]}" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
