#!/usr/bin/env bash
# Sets up, builds and runs every test that runs without a GPU (unit, MPI, Python).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${DISTTUNE_PRESET:-dev}"
bash scripts/setup.sh
bash scripts/build.sh "$preset"
ctest --preset "$preset" -j "$(nproc)"
bash scripts/fuzz.sh "${DISTTUNE_FUZZ_SECONDS:-60}"
bash scripts/python_setup.sh
.venv/bin/python -m pytest tests/python -q
