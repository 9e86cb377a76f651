#!/usr/bin/env bash
# Sets up, builds and runs every test that runs without a GPU (unit, MPI, Python on the wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${DISTTUNE_PRESET:-dev}"
# Where the time goes: the seconds since the start at the end of each step.
step_done() { echo "test: $1 done at ${SECONDS} s"; }
# Steps that run beside others, each in a process group of its own, its output in a log; on
# an early exit, every one still running is ended.
beside=()
trap 'for job in "${beside[@]}"; do kill -- "-$job" 2>/dev/null || kill "$job" 2>/dev/null || true; done' EXIT
start_beside() {  # LOG COMMAND...: starts COMMAND; its pid is $last_beside
  local log=$1
  shift
  setsid "$@" >"$log" 2>&1 &
  last_beside=$!
  beside+=("$last_beside")
}
finish_beside() {  # PID LOG NAME: waits for the step, prints its log, fails if it failed
  local status=0 job
  wait "$1" || status=$?
  local running=()
  for job in "${beside[@]}"; do [[ $job == "$1" ]] || running+=("$job"); done
  beside=("${running[@]}")
  if ((status != 0)); then
    tail -n 40 "$2"
    echo "test: $3 failed" >&2
    exit 1
  fi
  cat "$2"
  step_done "$3"
}

bash scripts/setup.sh
# The layers of src/layers.json: every #include (the build checks every call, by linking
# each layer alone); the Python package's, python/layers.json: every import.
python3 scripts/check_layers.py
python3 scripts/check_python_layers.py
bash scripts/build.sh "$preset"
step_done "build"
# Hit-path guard (C++): a cache hit against a direct call, as a ratio (sanitizers change it),
# on a quiet machine, before the wheel's build starts beside the tests.
if [[ $preset != asan ]]; then "build/$preset/bench/micro/hit_path_guard"; fi
# The Python package as users get it (scripts/package_check.sh): the sdist, the wheel pip
# builds from it on a Python user's machine, the test venv's tools. That build compiles the
# engine again (a user's machine has no build tree to reuse), so it runs beside ctest, niced:
# it takes the CPU ctest leaves idle (many tests wait on ranks, Redis or deadlines) and yields
# to ctest when it needs it.
# The fuzz targets' build (clang, sanitizers) goes beside them too, after the wheel's.
mkdir -p build
start_beside build/package_wheel.log nice -n 10 bash -c \
  'bash scripts/package_check.sh wheel && bash scripts/fuzz.sh 0 build'
wheel_job=$last_beside
ctest --preset "$preset" -j "$(nproc)"
step_done "ctest"
finish_beside "$wheel_job" build/package_wheel.log "the wheel and the fuzz targets"
# The fuzzers (one process each) run beside the Python tests (one process), each on a core.
start_beside build/fuzz.log bash scripts/fuzz.sh "${DISTTUNE_FUZZ_SECONDS:-60}" run
fuzz_job=$last_beside
# The wheel in a clean venv, the Python tests and mypy against it.
bash scripts/package_check.sh test
step_done "the Python tests"
finish_beside "$fuzz_job" build/fuzz.log "fuzz"
# Hit-path guard (Python), on the installed wheel package_check made, on a quiet machine.
build/package/test/bin/python bench/python/hit_guard.py
# The GPU benchmark suite's own logic (the spec method's counts, regrets, targets, the summary
# rows gpu_check prints; its kernels in Triton's interpreter), on the same venv.
build/package/test/bin/python -m pytest bench/suite/test_logic.py -q -p no:cacheprovider
step_done "all"
