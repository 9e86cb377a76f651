#!/usr/bin/env bash
# Sets up, builds and runs every test that runs without a GPU (unit, MPI, Python on the wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${DISTTUNE_PRESET:-dev}"
bash scripts/setup.sh
# The layers of src/layers.json: every #include (the build checks every call, by linking
# each layer alone).
python3 scripts/check_layers.py
bash scripts/build.sh "$preset"
ctest --preset "$preset" -j "$(nproc)"
# Hit-path guard (C++): a cache hit against a direct call, as a ratio (sanitizers change it).
if [[ $preset != asan ]]; then "build/$preset/bench/micro/hit_path_guard"; fi
bash scripts/fuzz.sh "${DISTTUNE_FUZZ_SECONDS:-60}"
# The Python package as users get it: sdist, manylinux wheel, clean venv, tests and mypy
# against the installed wheel.
bash scripts/package_check.sh
# Hit-path guard (Python), on the installed wheel package_check made.
build/package/test/bin/python bench/python/hit_guard.py
# The GPU benchmark suite's own logic (the spec method's counts, regrets, targets, the summary
# rows gpu_check prints; its kernels in Triton's interpreter), on the same venv.
build/package/test/bin/python -m pytest bench/suite/test_logic.py -q -p no:cacheprovider
