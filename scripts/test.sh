#!/usr/bin/env bash
# Sets up, builds and runs every test that runs without a GPU (unit, MPI, Python on the wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${DISTTUNE_PRESET:-dev}"
# Where the time goes: the seconds since the start at the end of each step.
step_done() { echo "test: $1 done at ${SECONDS} s"; }
bash scripts/setup.sh
# The layers of src/layers.json: every #include (the build checks every call, by linking
# each layer alone).
python3 scripts/check_layers.py
bash scripts/build.sh "$preset"
step_done "build"
# Hit-path guard (C++): a cache hit against a direct call, as a ratio (sanitizers change it),
# on a quiet machine, before the wheel's build starts beside the tests.
if [[ $preset != asan ]]; then "build/$preset/bench/micro/hit_path_guard"; fi
# The Python package as users get it (scripts/package_check.sh): the sdist, the wheel pip
# builds from it on a Python user's machine, the test venv's tools. That build compiles the
# engine again (a user's machine has no build tree to reuse), so it runs beside ctest and the
# fuzzers, niced: it takes the CPU they leave idle (each fuzzer is one process; many tests
# wait on ranks, Redis or deadlines) and yields to them when they need it.
mkdir -p build
setsid nice -n 10 bash scripts/package_check.sh wheel >build/package_wheel.log 2>&1 &
wheel_job=$!
trap 'kill -- "-$wheel_job" 2>/dev/null || kill "$wheel_job" 2>/dev/null || true' EXIT
ctest --preset "$preset" -j "$(nproc)"
step_done "ctest"
bash scripts/fuzz.sh "${DISTTUNE_FUZZ_SECONDS:-60}"
step_done "fuzz"
wait "$wheel_job" || { tail -n 40 build/package_wheel.log; echo "test: the wheel was not made" >&2; exit 1; }
trap - EXIT
cat build/package_wheel.log
step_done "the wheel"
# The wheel in a clean venv, the Python tests and mypy against it.
bash scripts/package_check.sh test
step_done "the Python tests"
# Hit-path guard (Python), on the installed wheel package_check made.
build/package/test/bin/python bench/python/hit_guard.py
# The GPU benchmark suite's own logic (the spec method's counts, regrets, targets, the summary
# rows gpu_check prints; its kernels in Triton's interpreter), on the same venv.
build/package/test/bin/python -m pytest bench/suite/test_logic.py -q -p no:cacheprovider
step_done "all"
