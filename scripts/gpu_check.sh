#!/usr/bin/env bash
# GPU check: run in the repository root of a machine with an NVIDIA GPU (the H200 device
# machine). Configures with CUDA, builds, runs the unit and GPU tests, the CUDA examples and
# the GPU benchmarks, and prints a table of the results last.
#
# Extending it: write a function step_<name> that does one thing and calls
#   record "<what>" PASS|FAIL|SKIP "<key figure>"
# once per row it wants in the table, then add its name to STEPS and to one of PARTS (below:
# the check in parts that each fit the device's 10-minute call). Give step logs to
# "$LOG_DIR"; put only small result files in "$OUT_DIR" ($OUT on the device machine,
# which brings back at most 8 files). `scripts/gpu_check.sh step_a step_b` runs only those
# steps; `scripts/gpu_check.sh --part N` runs part N, `--parts` lists them (and fails if a step
# is in no part).
#
# Environment: CUDA_ARCHITECTURES (default 90, the H200), DISTTUNE_GPU_BUILD_DIR (default
# build/gpu), OUT (where results go; default $DISTTUNE_GPU_BUILD_DIR/gpu-check),
# DISTTUNE_GPU_CHECK_PYTHON_BENCH=0 (the Python step runs the tests but not its benchmark).
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${DISTTUNE_GPU_BUILD_DIR:-build/gpu}
OUT_DIR=${OUT:-$BUILD_DIR/gpu-check}
LOG_DIR=$BUILD_DIR/gpu-check-logs
ARCH=${CUDA_ARCHITECTURES:-90}
RESULTS=$OUT_DIR/results.tsv
JOBS=$(nproc)
mkdir -p "$OUT_DIR" "$LOG_DIR"
: >"$RESULTS"

# record WHAT RESULT FIGURE: one row of the final table.
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RESULTS"; }

# counts LOG: "P passed, F failed, S skipped" from the per-test lines of a ctest log.
counts() {
  local passed failed skipped
  passed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* +Passed' "$1")
  failed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*(\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Not Run)' "$1")
  skipped=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$1")
  echo "$passed passed, $failed failed, $skipped skipped"
}

# Configures (a failure stops the check) and builds everything it can: a target that fails
# to build fails the build row, and the steps that need it fail on their own.
step_build() {
  local begin=$SECONDS
  if ! cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >"$LOG_DIR/configure.log" 2>&1; then
    tail -n 40 "$LOG_DIR/configure.log"
    record "configure (sm_$ARCH)" FAIL "see $LOG_DIR/configure.log"
    return 1
  fi
  if cmake --build "$BUILD_DIR" -j "$JOBS" -- -k 0 >"$LOG_DIR/build.log" 2>&1; then
    record "build (sm_$ARCH)" PASS "$((SECONDS - begin)) s"
  else
    grep -E '^FAILED:|error' "$LOG_DIR/build.log" | head -n 20
    record "build (sm_$ARCH)" FAIL "$(grep -c '^FAILED:' "$LOG_DIR/build.log") targets failed; $LOG_DIR/build.log"
  fi
}

# pytest_summary LOG: pytest's last summary line ("N passed, ..."), not a warning printed after it.
pytest_summary() { grep -E '[0-9]+ (passed|failed|errors?)' "$1" | tail -n 1; }

# json_rows WHAT LOG RESULT SUMMARY CMD...: runs CMD, its stdout to RESULT and its stderr to LOG.
# On success shows RESULT and records the rows SUMMARY prints: Python that reads the result as
# `r` (the file's JSON, else its last line's) and prints either a figure (the row WHAT, PASS)
# or whole rows "what<TAB>status<TAB>figure". On failure, of CMD or of SUMMARY, or a SUMMARY
# that prints nothing, records WHAT as FAILed (CMD's failure shows LOG's tail).
json_rows() {
  local what=$1 log=$2 result=$3 summary=$4 rows
  shift 4
  if ! "$@" >"$result" 2>>"$log"; then
    tail -n 30 "$log"
    record "$what" FAIL "see $log"
    return 0
  fi
  cat "$result"
  if ! rows=$(python3 -c "import json, sys
text = open(sys.argv[1]).read().strip()
try:
    r = json.loads(text)
except ValueError:
    r = json.loads(text.splitlines()[-1])
$summary" "$result" 2>>"$log"); then
    record "$what" FAIL "its result did not read; see $log"
    return 0
  fi
  if [[ -z $rows ]]; then
    record "$what" FAIL "its summary printed no row; see $result"
    return 0
  fi
  local line
  while IFS= read -r line; do
    if [[ $line == *$'\t'* ]]; then printf '%s\n' "$line" >>"$RESULTS"; else record "$what" PASS "$line"; fi
  done <<<"$rows"
}

# ctest_label LABEL [SKIPS_OK]: runs the tests of one label and shows the output of those
# that fail. Skipped tests fail the row unless SKIPS_OK is given (the unit label holds
# tests that only run where there is no driver).
ctest_label() {
  local label=$1 skips_ok=${2:-} log=$LOG_DIR/ctest_$1.log jobs=4
  # GPU tests time kernels and the host's launches: one at a time, or they time each other.
  [[ $label == gpu ]] && jobs=1
  (cd "$BUILD_DIR" && ctest -L "^$label\$" -V --timeout 300 -j "$jobs") >"$log" 2>&1
  local status=$? summary
  summary=$(counts "$log")
  grep -E '^\s*[0-9]+: (spin of|read of|tiny kernel|hardware|deps)' "$log" | sed 's/^ *[0-9]*: /  /'
  if ((status != 0)); then
    (cd "$BUILD_DIR" && ctest -L "^$label\$" --rerun-failed --output-on-failure --timeout 300) 2>&1 |
      grep -vE '^ *(Start|[0-9]+/[0-9]+ Test.*Passed)' | tail -n 80
  fi
  if ((status == 0)) && { [[ -n $skips_ok ]] || [[ $summary == *", 0 skipped" ]]; }; then
    record "ctest -L $label" PASS "$summary"
  else
    record "ctest -L $label" FAIL "$summary"
  fi
}

step_unit_tests() { ctest_label unit skips-ok; }

# test_result NAME LOG: FAIL if the GoogleTest whose name starts with NAME failed in LOG, else PASS.
test_result() {
  if grep -qE "\[  FAILED  \] [A-Za-z]+\.$1" "$2"; then echo FAIL; else echo PASS; fi
}

step_gpu_tests() {
  ctest_label gpu
  local log=$LOG_DIR/ctest_gpu.log line
  line=$(grep -oE 'expected [0-9.]+ ms, timer [0-9.]+ ms' "$log" | head -n 1)
  [[ -n $line ]] && record "  timer accuracy (clock64 spin)" PASS "$line"
  line=$(grep -oE 'warm L2 [0-9.]+ ms, flushed [0-9.]+ ms \(x[0-9.]+\)' "$log" | head -n 1)
  [[ -n $line ]] && record "  L2 flush visible" PASS "$line"
  line=$(grep -oE 'per-run event pairs [0-9.]+ us, graph replay [0-9.]+ us per launch' "$log" | head -n 1)
  [[ -n $line ]] && record "  graph vs per-run (tiny kernel)" PASS "$line"
  line=$(grep -oE '[0-9]+ of 30 discarded, timer [0-9.]+ ms, %globaltimer [0-9.]+ ms' "$log" | head -n 1)
  [[ -n $line ]] && record "  launch of 300 us, lead of 0.1 ms" "$(test_result ALaunchLongerThanTheLead "$log")" "$line"
  line=$(grep -oE 'launcher that synchronizes: [0-9]+ of 20 discarded' "$log" | head -n 1)
  [[ -n $line ]] && record "  host-bound launcher" "$(test_result ALauncherThatWaitsForItsKernel "$log")" "$line"
  line=$(grep -m1 '2 ms spins after one 300 us launch' "$log" | grep -oE '"led_runs":[0-9]+')
  [[ -n $line ]] && record "  no lead behind queued runs" "$(test_result ARunWithLongerRunsQueuedAhead "$log")" \
    "13 runs of 2 ms after one slow launch: $line (at most 5)"
  return 0
}

# example NAME ARGS...: runs an example twice in fresh processes against a fresh cache
# directory: the first tunes, the second must read the disk record.
example() {
  local name=$1 binary=$BUILD_DIR/examples/cuda/$1
  shift
  local cache=$BUILD_DIR/gpu-check-cache/$name log=$LOG_DIR/$name.log
  rm -rf "$cache"
  if TRITON_DIST_AUTOTUNE_CACHE_DIR=$cache "$binary" "$@" >"$log" 2>&1 &&
     TRITON_DIST_AUTOTUNE_CACHE_DIR=$cache "$binary" "$@" >"$log.second" 2>&1; then
    cat "$log"
    local chosen second
    chosen=$(grep -m1 '^chosen config' "$log" | sed 's/^chosen config: //')
    second=$(grep -m1 -oE 'read from the disk cache|tuned now' "$log.second")
    record "example $name" PASS "$chosen; 2nd process: $second"
  else
    cat "$log" "$log.second" 2>/dev/null
    record "example $name" FAIL "see $log"
  fi
}

step_example_scale() { example scale_cuda; }
step_example_gemm() { example gemm_cuda; }

# Contextual: two tunable kernels inside one outer call (no disk cache: one process).
step_example_contextual() {
  local log=$LOG_DIR/contextual_cuda.log
  if "$BUILD_DIR/examples/cuda/contextual_cuda" >"$log" 2>&1 && grep -q 'result checked' "$log"; then
    cat "$log"
    record "example contextual_cuda" PASS "$(grep -m1 -oE 'second call: [0-9]+ outer runs?' "$log")"
  else
    tail -n 40 "$log"
    record "example contextual_cuda" FAIL "see $log"
  fi
}

step_bench_gemm() {
  local log=$LOG_DIR/gemm_bench.log
  if "$BUILD_DIR/bench/gpu/gemm_bench" "$OUT_DIR" >"$log" 2>&1; then
    cat "$log"
    record "bench gemm (4096^3)" PASS "$(grep -m1 '^SUMMARY' "$log" | sed 's/^SUMMARY //')"
  else
    cat "$log"
    record "bench gemm (4096^3)" FAIL "see $log"
  fi
}

# Where the C++ hit path's time goes (issue 25): gemm_bench --hit-only, the tuned call split
# into arms (direct, tuned, tuned through the std::function spelling, lookup+direct, the launch
# std::function alone) in one paired rotation, and the same without launches (warm host
# caches). Builds gemm_bench first if the build step did not.
step_bench_hit() {
  local log=$LOG_DIR/hit_breakdown.log
  if [[ ! -x $BUILD_DIR/bench/gpu/gemm_bench ]] &&
     ! { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" &&
         cmake --build "$BUILD_DIR" -j "$JOBS" --target gemm_bench; } >"$log" 2>&1; then
    tail -n 30 "$log"
    record "bench hit breakdown (256^3)" FAIL "gemm_bench did not build; see $log"
    return 0
  fi
  if "$BUILD_DIR/bench/gpu/gemm_bench" "$OUT_DIR" --hit-only >>"$log" 2>&1; then
    cat "$OUT_DIR/hit_breakdown.md"
    record "bench hit breakdown (256^3)" PASS "$(grep -m1 '^SUMMARY' "$log" | sed 's/^SUMMARY //')"
  else
    tail -n 30 "$log"
    record "bench hit breakdown (256^3)" FAIL "see $log"
  fi
}

STEPS=(step_build step_unit_tests step_gpu_tests step_example_scale step_example_gemm
       step_example_contextual step_bench_gemm step_bench_hit)
# More steps (MPI/NCCL, Python/Triton) go here: STEPS+=(step_...)

# Multi-rank: the NCCL communicator on one GPU, the NCCL scale example with one rank per GPU,
# and the MPI tests (CPU ranks).
step_multi_rank() {
  local log=$LOG_DIR/nccl_communicator.log gpus
  local mpirun=(mpirun --allow-run-as-root --oversubscribe)
  if [[ ! -x $BUILD_DIR/tests/gpu/test_nccl_communicator ]]; then
    record "nccl communicator (1 GPU)" FAIL "not built: NCCL not found? see $LOG_DIR/configure.log"
  elif "$BUILD_DIR/tests/gpu/test_nccl_communicator" >"$log" 2>&1 && ! grep -q 'SKIPPED' "$log"; then
    record "nccl communicator (1 GPU)" PASS "$(grep -oE '[0-9]+ tests? from [0-9]+ test suites? ran' "$log")"
  else
    tail -n 40 "$log"
    record "nccl communicator (1 GPU)" FAIL "see $log"
  fi
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  ((gpus > 0)) || gpus=1
  log=$LOG_DIR/scale_nccl.log
  if TRITON_DIST_AUTOTUNE_CACHE_DIR=$BUILD_DIR/gpu-check-cache/scale_nccl TRITON_DIST_AUTOTUNE_TIMEOUT=120 \
     "${mpirun[@]}" -np "$gpus" -x TRITON_DIST_AUTOTUNE_CACHE_DIR -x TRITON_DIST_AUTOTUNE_TIMEOUT \
     "$BUILD_DIR/examples/mpi/scale_nccl" >"$log" 2>&1; then
    cat "$log"
    record "example scale_nccl (-np $gpus)" PASS "$(grep -m1 '^rank 0 uses' "$log" | sed 's/^rank 0 uses //')"
  else
    cat "$log"
    record "example scale_nccl (-np $gpus)" FAIL "see $log"
  fi
  ctest_label mpi
}
STEPS+=(step_multi_rank)

# No deadline: the NCCL example with TRITON_DIST_AUTOTUNE_TIMEOUT=inf tunes as with a finite
# one (NCCL collectives poll against a deadline that never passes, instead of overflowing).
step_no_deadline() {
  local log=$LOG_DIR/scale_nccl_no_deadline.log gpus
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  ((gpus > 0)) || gpus=1
  if TRITON_DIST_AUTOTUNE_CACHE_DIR=$BUILD_DIR/gpu-check-cache/scale_nccl_no_deadline \
     TRITON_DIST_AUTOTUNE_TIMEOUT=inf timeout 600 mpirun --allow-run-as-root --oversubscribe \
     -np "$gpus" -x TRITON_DIST_AUTOTUNE_CACHE_DIR -x TRITON_DIST_AUTOTUNE_TIMEOUT \
     "$BUILD_DIR/examples/mpi/scale_nccl" >"$log" 2>&1; then
    record "scale_nccl, TIMEOUT=inf (-np $gpus)" PASS "$(grep -m1 '^rank 0 uses' "$log" | sed 's/^rank 0 uses //')"
  else
    tail -n 40 "$log"
    record "scale_nccl, TIMEOUT=inf (-np $gpus)" FAIL "see $log"
  fi
}
STEPS+=(step_no_deadline)

# pip_install_package LOG ROW: installs the Python package into the machine's python3 (output
# to LOG); on failure records ROW as FAILed and returns 1. The module must link the system's
# shared libstdc++ (torch does): PYTHON_CXX, default /usr/bin/g++.
pip_install_package() {
  if ! CXX=${PYTHON_CXX:-/usr/bin/g++} python3 -m pip install --no-build-isolation --no-deps -q . >"$1" 2>&1; then
    tail -n 30 "$1"
    record "$2" FAIL "pip install . failed; see $1"
    return 1
  fi
}

# Python package: installs it into the machine's python3 (offline build), runs tests/python
# (the GPU tests included) and bench/python/bench_gpu.py (result JSON in $OUT_DIR).
step_python() {
  local log=$LOG_DIR/python.log
  pip_install_package "$log" "python: pip install ." || return 0
  # The HTML report test needs headless Chromium (CI has it); it checks no GPU behaviour.
  # test_multi_gpu.py runs in step_multi_gpu, one GPU per rank; test_allgather_gemm.py and
  # test_missing_ranks.py are CPU tests (gloo ranks, Triton's interpreter) that CI runs.
  # The drop-in's tests run in step_triton_dropin.
  local deselect=(--ignore=tests/python/test_multi_gpu.py --ignore=tests/python/test_allgather_gemm.py
                  --ignore=tests/python/test_missing_ranks.py --ignore=tests/python/test_triton_dropin.py
                  --ignore=tests/python/test_triton_dropin_switch.py
                  --ignore=tests/python/test_triton_dropin_ranks.py) note=""
  if ! command -v chromium >/dev/null; then
    deselect+=(--deselect tests/python/test_report.py)
    note=" (report test left to CI: no chromium here)"
  fi
  if python3 -m pytest tests/python -q -p no:cacheprovider "${deselect[@]}" >>"$log" 2>&1; then
    record "python: pytest tests/python" PASS "$(pytest_summary "$log")$note"
  else
    tail -n 40 "$log"
    record "python: pytest tests/python" FAIL "$(pytest_summary "$log")$note"
  fi
  if [[ ${DISTTUNE_GPU_CHECK_PYTHON_BENCH:-1} == 0 ]]; then
    record "python bench (32-config matmul)" SKIP "DISTTUNE_GPU_CHECK_PYTHON_BENCH=0"
    return 0
  fi
  json_rows "python bench (32-config matmul)" "$log" "$OUT_DIR/python_bench.json" '
within, regret = r["regret_within_0.5pct"], r["regret"]
print("first call x%.1f vs spec (function x%.1f), hit +%.0f ns; regret<=0.5%%: " % (
    r["speedup_contextual_vs_spec"], r["speedup_function_vs_spec"], r["cache_hit"]["overhead_ns"])
    + ", ".join("%s %d/%d (max %.2f%%)" % (mode, within[mode], len(regret[mode]), 100 * max(regret[mode]))
                for mode in within))' python3 bench/python/bench_gpu.py
}
STEPS+=(step_python)

# Near-ties on the 32-config matmul (issue 25): bench/python/bench_gpu.py regret alone (10 fresh
# tunings per mode against do_bench's oracle: contextual, and the function path as users get
# it, with flush_l2 and with the mean), every mode's row shown.
step_near_ties() {
  local log=$LOG_DIR/near_ties.log
  python3 -c 'import disttune' 2>/dev/null || pip_install_package "$log" "near-ties (32-config matmul)" || return 0
  json_rows "near-ties (32-config matmul)" "$log" "$OUT_DIR/near_ties.json" '
for mode, count in r["regret_within_0.5pct"].items():
    regret = r["regret"][mode]
    chosen = r["regret"]["chosen"].get(mode)
    print("  regret<=0.5%%: %s\tINFO\t%d/%d (max %.2f%%)%s" % (mode, count, len(regret), 100 * max(regret),
                                                            "; chose %s" % chosen if chosen else ""))' \
    python3 bench/python/bench_gpu.py regret
}
STEPS+=(step_near_ties)

# Many shapes (issue 23): 16 buckets of a 384-config matmul, warm-started sweep vs
# independent tunings (6 buckets, scaled to 16), each choice vs an interleaved oracle on 6
# buckets; sizes as tl.constexpr and as run-time arguments. JSON in $OUT_DIR; 6-8 minutes.
step_many_shapes() {
  local log=$LOG_DIR/many_shapes.log
  pip_install_package "$log" "many shapes: pip install ." || return 0
  # shellcheck disable=SC2086  # DISTTUNE_MANY_SHAPES_ARGS: extra flags (--skip-runtime)
  json_rows "many shapes bench" "$log" "$OUT_DIR/many_shapes.json" '
c = r["constexpr"]
gapped = {name: sum(n or 0 for n in runs) for name, runs in c["gapped_runs"].items()}
kept = {name: sum(n or 0 for n in runs) for name, runs in c["host_bound_runs"].items()}
print("many shapes: constexpr sweep vs 16 alone\t%s\t%.0f s vs %.0f s est. (x%.2f, target <= 0.20); %d warm-started, %d full; within 2%%: sweep %d/6, alone %d/6; runs discarded for a gap: sweep %d, alone %d (kept host-bound: %d, %d)" % (
    "MET" if c["ratio_warm_to_independent"] <= 0.20 and c["within_2pct_of_best"]["sweep"] >= 6 else "MISSED",
    c["warm_sweep_s"], c["independent_16_estimate_s"], c["ratio_warm_to_independent"], c["warm_started_keys"],
    c["full_space_keys"], c["within_2pct_of_best"]["sweep"], c["within_2pct_of_best"]["independent"],
    gapped["sweep"], gapped["independent"], kept["sweep"], kept["independent"]))
if "runtime" in r:
    t = r["runtime"]
    slowest = 1 + t["later_keys_s"].index(max(t["later_keys_s"]))  # its index among all keys
    print("many shapes: run-time sizes later keys\t%s\tfirst %.1f s, later max %.3f s median %.3f s (target <= 0.15; the slowest: %d samples, %.1f ms timed); within 2%%: %d/6" % (
        "MET" if t["later_keys_max_s"] <= 0.15 and t["within_2pct_of_best"] >= 6 else "MISSED",
        t["first_key_s"], t["later_keys_max_s"], t["later_keys_median_s"], t["samples"][slowest],
        t["timed_ms"][slowest], t["within_2pct_of_best"]))' python3 bench/python/many_shapes.py ${DISTTUNE_MANY_SHAPES_ARGS:-}
}
STEPS+=(step_many_shapes)

# Isolated vs in-process measurement phase (issue 16) on the 32-config matmul; the Python GPU
# tests of isolation (illegal address, endless kernel, wrong results) run in step_python.
step_isolation_bench() {
  local log=$LOG_DIR/isolation_bench.log
  pip_install_package "$log" "isolation bench (32-config matmul)" || return 0
  json_rows "isolation bench (32-config matmul)" "$log" "$OUT_DIR/isolation_bench.json" '
print("isolated/in-process x%.2f (target <= 1.5: %s)" % (
    r["median_ratio_isolated_vs_in_process"], "MET" if r["met"] else "MISSED"))' python3 bench/python/isolation_overhead.py
}
STEPS+=(step_isolation_bench)

# The search strategy live on the recorded matmul space (issue 22): configs JIT-compiled only
# when the search names them; the choice's recorded time over the table's best.
step_search_live() {
  local log=$LOG_DIR/search_live.log
  pip_install_package "$log" "search live (1,536-config matmul)" || return 0
  json_rows "search live (1,536-config matmul)" "$log" "$OUT_DIR/search_live.jsonl" '
runs = [json.loads(line) for line in text.splitlines()]
print("; ".join("seed %d: %.1f s, %d measured (%d failed), x%s of table best" % (run["seed"], run["first_call_s"], run["measured"], run["failed"], run["ratio_to_table_best"]) for run in runs))' \
    python3 bench/replay/search_live.py --case matmul_fp16_3072 --seeds 2
}
STEPS+=(step_search_live)

# New exhaustive replay tables (issue 37): bench/replay's attention, fp8 matmul and softmax cases,
# each compiled on every core and timed in 3 interleaved rounds, written to $OUT_DIR as a raw table
# (bench/replay/canonical_table.py turns one into tests/data/replay's form, on any machine). Not in
# STEPS: ~6-8 min on the H200 (estimated); run on its own: `scripts/gpu_check.sh step_record_tables`.
# RECORD_TABLE_CASES="name ..." records other cases of bench/replay/kernels.py.
RECORD_TABLE_CASES=${RECORD_TABLE_CASES:-attention_fp16_causal_2x16x4096x128 matmul_fp8_4096 softmax_fp16_16384x8192}
step_record_tables() {
  local log=$LOG_DIR/record_tables.log case cases
  read -r -a cases <<<"$RECORD_TABLE_CASES"
  for case in "${cases[@]}"; do
    if PYTHONUNBUFFERED=1 python3 bench/replay/record_table.py --out "$OUT_DIR" --case "$case" --threads "$JOBS" \
         2>&1 | tee -a "$log"; then
      record "replay table $case" PASS "$(tail -n 1 "$log" | cut -d';' -f1)"
    else
      record "replay table $case" FAIL "see $log"
    fi
  done
}

# The drop-in's first call against the compile pool's size (TRITON_DIST_AUTOTUNE_COMPILE_THREADS,
# bench/python/compile_threads.py: fla's chunk_gla, the 384-config matmul and the 32-config
# contextual call, 2 interleaved rounds of 8, 16 and 32 threads). Not in STEPS: ~8 min (estimated);
# run on its own: `scripts/gpu_check.sh step_compile_threads`.
step_compile_threads() {
  local log=$LOG_DIR/compile_threads.log
  pip_install_package "$log" "compile threads" || return 0
  json_rows "compile threads" "$log" "$OUT_DIR/compile_threads.json" '
for op, counts in r["ops"].items():
    print("compile threads: %s\tPASS\t%s" % (op, ", ".join("%s threads %.2f s" % (n, c["median_s"]) for n, c in counts.items())))' \
    env PYTHONUNBUFFERED=1 python3 bench/python/compile_threads.py
}

# Compile/measure pipeline (issue 22, bench/python/pipeline_bench.py, ~4 min): (a) the 384-config
# matmul first call per strategy with its text timeline and regret over fresh tunings while
# the budget lasts, (b) the 32-config first call next to triton.autotune, (c) 2 ranks with
# disjoint cores and split vs one rank (a Triton cache each, then one).
# DISTTUNE_PIPELINE_STRATEGIES (default converge, plus search when registered) picks the
# strategies of (a). Output in $OUT_DIR/pipeline_bench.txt; the oracle's figures as a raw replay
# table of the space on this device in $OUT_DIR/pipeline_table.raw.json (bench/replay/README.md).
step_pipeline_bench() {
  local log=$LOG_DIR/pipeline_bench.log
  pip_install_package "$log" "pipeline bench (384-config matmul)" || return 0
  local strategies=${DISTTUNE_PIPELINE_STRATEGIES:-}
  if [[ -z $strategies ]]; then
    strategies=converge
    if python3 -c 'import sys, disttune._core as c; sys.exit("search" not in c.registered_strategies())' 2>/dev/null; then
      strategies=converge,search
    fi
  fi
  json_rows "pipeline bench (384-config matmul)" "$log" "$OUT_DIR/pipeline_bench.txt" '
parts = ["%s first call %.1f s median, %.1f s worst%s (<= 8 at every seed), regret<=1%%: %d/%d" % (
             name, s["first_call_median_s"], max(s["first_call_s"]),
             " of seeds %d-%d" % (s["seeds"][0], s["seeds"][-1]) if s.get("seeds") else "",
             s["within_1pct"], s["tunings"])
         for name, s in r["space_384"].items()]
parts.append("32 configs %.2f s (<= 2.5) vs triton.autotune %.1f s" % (r["first_call_32"]["disttune"], r["first_call_32"]["triton"]))
parts.append("2 ranks x%.2f with a Triton cache each, x%.2f with one (<= 0.7)" % (r["ranks"]["ratio"], r["ranks"]["one_cache_ratio"]))
print("; ".join(parts))' \
    env PYTHONUNBUFFERED=1 python3 bench/python/pipeline_bench.py --strategies "$strategies" --tunings 10 --budget-s 90 --seeds \
      --table "$OUT_DIR/pipeline_table.raw.json"
}
STEPS+=(step_pipeline_bench)

# The triton.autotune drop-in (issue 24): its conformance tests against plain Triton on the GPU
# (out-of-resources configs included; the gloo-rank test is a CPU test CI runs), then
# bench/python/dropin_bench.py (dropin_bench.json in $OUT_DIR): first call vs triton.autotune,
# regret vs an interleaved oracle (real libraries: step_real_libs_fla, step_real_libs_others).
step_triton_dropin() {
  local log=$LOG_DIR/triton_dropin.log
  pip_install_package "$log" "triton drop-in: conformance" || return 0
  if python3 -m pytest tests/python/test_triton_dropin.py tests/python/test_triton_dropin_switch.py -q -rxXs \
       -p no:cacheprovider >>"$log" 2>&1; then
    record "triton drop-in: conformance" PASS "$(pytest_summary "$log")"
  else
    tail -n 60 "$log"
    record "triton drop-in: conformance" FAIL "$(pytest_summary "$log")"
  fi
  json_rows "triton drop-in: bench" "$log" "$OUT_DIR/dropin_bench.json" '
f, t = r["first_call_s"], r["targets"]
print("first call %.1f s vs triton %.1f s (x%.2f, <=0.2: %s); within 1%%: %d/10" % (
    f["dropin"], f["triton"], r["first_call_ratio_dropin_over_triton"],
    "MET" if t["first_call_at_most_one_fifth"] else "MISSED", r["regret"]["within_1pct"]))' python3 bench/python/dropin_bench.py
}
STEPS+=(step_triton_dropin)

# The drop-in's compile order and same-binary sharing (docs/triton-dropin.md, "Where a compile's
# time goes"): fla's chunk_gla first call as before, with the sharing only, and as shipped
# (bench/python/compile_order_ab.py, 2 interleaved rounds of fresh processes), then every
# config's compile stages timed on this host (bench/python/compile_stages.py) and the orders
# replayed over the first round's timeline of `before` (bench/replay/compile_order.py). Not in
# STEPS: ~8 min (estimated); run on its own: `scripts/gpu_check.sh step_compile_order`.
step_compile_order() {
  local log=$LOG_DIR/compile_order.log
  local timeline=$OUT_DIR/compile_order_timeline.json stages=$OUT_DIR/compile_stages.json
  pip_install_package "$log" "compile order" || return 0
  json_rows "compile order" "$log" "$OUT_DIR/compile_order.json" '
for name, v in r["variants"].items():
    print("compile order: fla.chunk_gla %s\tPASS\tfirst call median %.2f s (%s), %d compiled, %d stage runs reused" % (
        name, v["median_s"], ", ".join("%.2f" % s for s in v["first_calls_s"]), v["compiled"], v["stages_reused"]))' \
    env PYTHONUNBUFFERED=1 python3 bench/python/compile_order_ab.py --variants before,memo,shipped --timeline-out "$timeline"
  [[ -s $timeline ]] || return 0
  if PYTHONUNBUFFERED=1 python3 bench/python/compile_stages.py --out "$stages" >>"$log" 2>&1 \
     && python3 bench/replay/compile_order.py --timeline "$timeline" --stages "$stages" >>"$log" 2>&1; then
    record "compile stages and order replay" PASS "$(grep -E '^\| all \|' "$log" | tail -n 2 | tr '\n' ' ')"
  else
    tail -n 30 "$log"
    record "compile stages and order replay" FAIL "see $log"
  fi
}

# Real libraries under the switch (issue 35): bench/python/real_libs.py (real_libs_PART.json in
# $OUT_DIR) runs fla-core's chunk_gla and Liger-Kernel's ops (wheels from .whl/) forward and
# backward, plain Triton vs disttune.triton.install(), fresh caches, then a second process over
# the stores; and the 384-config matmul through the drop-in against an interleaved oracle.
real_libs_rows() {
  local part=$1 log=$LOG_DIR/real_libs_$1.log result=$OUT_DIR/real_libs_$1.json
  shift
  pip_install_package "$log" "real libraries ($part)" || return 0
  if PYTHONUNBUFFERED=1 python3 bench/python/real_libs.py "$@" --out "$result" >>"$log" 2>&1; then
    sed -n '/^== /,$p' "$log"
    python3 - "$result" <<'PY' | while IFS=$'\t' read -r what status figure; do record "$what" "$status" "$figure"; done
import json, statistics, sys
r = json.load(open(sys.argv[1]))
for row in r["ops"]:
    runs = row["runs"]
    if "targets" not in row:
        print("real lib %s\tFAIL\tfailed: %s" % (row["op"], [m for m, run in runs.items() if "error" in run]))
        continue
    t = row["targets"]
    ok = "PASS" if t["l2_error_at_most_1e-2"] else "FAIL"
    first = {mode: statistics.median(calls) for mode, calls in row["first_calls_s"].items()}
    print("real lib %s\t%s\tfirst %.1f s vs plain %.1f s (medians, x%.3f, <=1/8 %s); steady x%.3f (device x%.3f; choices in one process x%s, <=1.03 %s); L2 %.1e; 2nd process %.2f s (%s); taken %d, left %d; choices differ %d" % (
        row["op"], ok, first["dropin"], first["plain"], row["first_call_ratio"],
        "MET" if t["first_call_at_most_1_8"] else "MISSED", row["steady_ratio"], row["steady_device_ratio"],
        "%.3f" % row["pinned_device_ratio"] if "pinned_device_ratio" in row else "? (failed)",
        "MET" if t["steady_within_3pct"] else "MISSED", row["l2_error"], runs["again"]["first_call_s"],
        "MET" if t["second_process_at_most_1s"] else "MISSED", runs["dropin"]["taken"], len(runs["dropin"]["left"]),
        sum(len(keys) for keys in row["choices_differ"].values())))
m = r.get("matmul")
if m and "targets" in m:
    print("matmul 384 via drop-in\tPASS\tfirst call %.2f s (<=8 s %s), regret %.2f%% (<=1%% %s)" % (
        m["first_call_s"], "MET" if m["targets"]["first_call_at_most_8s"] else "MISSED", 100 * m["regret"],
        "MET" if m["targets"]["regret_at_most_1pct"] else "MISSED"))
elif m:
    print("matmul 384 via drop-in\tFAIL\t%s" % str(m.get("error", m))[-200:])
PY
  else
    tail -n 40 "$log"
    record "real libraries ($part)" FAIL "see $log"
  fi
}
# fla's op alone (plain Triton's first call takes 160-270 s on the H200), then the others and
# the 384-config matmul: two parts of at most 600 s each.
step_real_libs_fla() { real_libs_rows fla --ops fla.chunk_gla --no-matmul; }
step_real_libs_others() { real_libs_rows others --ops liger.dyt,liger.swiglu; }
STEPS+=(step_real_libs_fla step_real_libs_others)

# Benchmark suite of issue 7 (bench/suite): 4 cases x 4 tuners; suite.json and suite.md in
# $OUT_DIR, then one row per target, MET or MISSED (a benchmark's result: it fails nothing).
step_bench_suite() {
  local log=$LOG_DIR/bench_suite.log summary=$LOG_DIR/bench_suite.tsv
  pip_install_package "$log" "bench suite" || return 0
  # As measured in BENCHMARKS.md (issue 12): the spec's method and disttune's exhaustive and
  # converge strategies, measurement phase and regret (no first calls), then the launch-bound
  # investigation of scale 2^18.
  local tuners="spec method,disttune exhaustive,disttune exhaustive (clock control off),disttune converge"
  if PYTHONUNBUFFERED=1 python3 bench/suite/run_suite.py --tuners "$tuners" --no-first-call \
       --out "$OUT_DIR" --summary "$summary" 2>&1 | tee -a "$log"; then
    record "bench suite (4 cases x 4 tuners)" PASS "$(grep -oE 'suite wall time [0-9]+ s' "$OUT_DIR/suite.md")"
    local what result figure
    while IFS=$'\t' read -r what result figure; do record "  $what" "$result" "$figure"; done <"$summary"
  else
    record "bench suite (4 cases x 4 tuners)" FAIL "see $log"
  fi
  if PYTHONUNBUFFERED=1 python3 bench/suite/launch_bound.py --out "$OUT_DIR" 2>&1 | tee -a "$log"; then
    record "  launch-bound investigation" PASS "$(grep -m1 '^best config by method' "$log")"
  else
    record "  launch-bound investigation" FAIL "see $log"
  fi
}
STEPS+=(step_bench_suite)

# Multi-GPU (issue 17), one GPU per rank, in the steps below: the NCCL scenarios of
# tests/python/test_multi_gpu.py and of tests/gpu/nccl_fault_scenarios.cpp, the tuning wall
# time on N GPUs vs 1, the rank-split first call on N GPUs vs 1, the all-gather + GEMM
# benchmark, and the fault stress (DISTTUNE_GPU_CHECK_STRESS_REPEATS per fault, default 50;
# DISTTUNE_GPU_CHECK_STRESS_JOBS at once, default 16). JSON in $OUT_DIR. With one GPU: SKIP
# rows saying so.
# multi_gpu_ready ROW: the number of GPUs if there are 2+ and the Python package imports
# (installed here if not); otherwise records ROW as SKIP or FAIL and returns 1.
multi_gpu_ready() {
  local row=$1 gpus cxx=${PYTHON_CXX:-/usr/bin/g++}
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  if ((gpus < 2)); then
    record "$row" SKIP "${gpus:-0} GPU: one GPU per rank needs 2+"
    return 1
  fi
  if ! python3 -c 'import disttune' 2>/dev/null &&
     ! CXX=$cxx python3 -m pip install --no-build-isolation --no-deps -q . >"$LOG_DIR/pip_install.log" 2>&1; then
    record "$row" FAIL "pip install . failed; see $LOG_DIR/pip_install.log"
    return 1
  fi
  echo "$gpus"
}

step_multi_gpu() {
  local gpus log=$LOG_DIR/multi_gpu.log
  gpus=$(multi_gpu_ready "multi-GPU scenarios (NCCL)") || return 0
  if NCCL_NVLS_ENABLE=0 python3 -m pytest tests/python/test_multi_gpu.py -q -p no:cacheprovider >>"$log" 2>&1; then
    record "multi-GPU scenarios (NCCL, $gpus GPUs)" PASS "$(pytest_summary "$log")"
  else
    tail -n 60 "$log"
    record "multi-GPU scenarios (NCCL, $gpus GPUs)" FAIL "$(pytest_summary "$log")"
  fi
  local mpirun=(mpirun --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE=0)
  if NCCL_NVLS_ENABLE=0 "${mpirun[@]}" -np "$gpus" "$BUILD_DIR/examples/mpi/allgather_gemm_nccl" \
       >"$LOG_DIR/allgather_gemm_nccl.log" 2>&1; then
    cat "$LOG_DIR/allgather_gemm_nccl.log"
    record "example allgather_gemm_nccl (-np $gpus)" PASS "$(grep -m1 -oE 'chosen config: .*' "$LOG_DIR/allgather_gemm_nccl.log" | cut -c1-150)"
  else
    tail -n 30 "$LOG_DIR/allgather_gemm_nccl.log"
    record "example allgather_gemm_nccl (-np $gpus)" FAIL "see $LOG_DIR/allgather_gemm_nccl.log"
  fi
}
STEPS+=(step_multi_gpu)

# The same scenarios through disttune::nccl in C++ (mpirun, one GPU per rank): MAX rule,
# record on some ranks, divergent prune, failing config, killed rank, hung rank.
step_multi_gpu_nccl_cpp() {
  local gpus log=$LOG_DIR/nccl_fault_scenarios.log binary=$BUILD_DIR/tests/gpu/nccl_fault_scenarios
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  if ((gpus < 2)); then
    record "C++ NCCL scenarios" SKIP "${gpus:-0} GPU: one GPU per rank needs 2+"
  elif [[ ! -x $binary ]]; then
    record "C++ NCCL scenarios" FAIL "not built: CUDA, NCCL or MPI not found? see $LOG_DIR/configure.log"
  elif NCCL_NVLS_ENABLE=0 tests/gpu/run_nccl_fault_scenarios.sh "$binary" "$gpus" >"$log" 2>&1; then
    cat "$log"
    record "C++ NCCL scenarios (-np $gpus)" PASS "6 of 6: $(grep -oE '(killed|hung)_rank: PASS raised [0-9.]+ s' "$log" | sed 's/: PASS raised/ named after/' | paste -sd, -)"
  else
    cat "$log"
    record "C++ NCCL scenarios (-np $gpus)" FAIL "$(grep -c '^FAIL' "$log") failed; see $log"
  fi
}
STEPS+=(step_multi_gpu_nccl_cpp)

step_multi_gpu_wall_time() {
  local gpus log=$LOG_DIR/multi_gpu_bench.log line torchrun=(python3 -m torch.distributed.run --standalone)
  gpus=$(multi_gpu_ready "bench tuning wall time") || return 0
  local one=$OUT_DIR/tuning_wall_1gpu.json many=$OUT_DIR/tuning_wall_${gpus}gpu.json
  if NCCL_NVLS_ENABLE=0 "${torchrun[@]}" --nproc-per-node=1 bench/distributed/tuning_wall_time.py >"$one" 2>>"$log" &&
     NCCL_NVLS_ENABLE=0 "${torchrun[@]}" --nproc-per-node="$gpus" bench/distributed/tuning_wall_time.py >"$many" 2>>"$log"; then
    line=$(python3 -c 'import json, sys
one, many = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:3])
print("%.1f ms on %d GPUs vs %.1f ms on 1: x%.2f (target <= 1.1; x%.2f with the old poll)" % (many["median_ms"], many["ranks"], one["median_ms"], many["median_ms"] / one["median_ms"], many["median_ms_old_poll"] / one["median_ms_old_poll"]))' "$one" "$many")
    record "bench tuning wall time" PASS "$line"
  else
    tail -n 20 "$log"
    record "bench tuning wall time" FAIL "see $log"
  fi
}
STEPS+=(step_multi_gpu_wall_time)

step_multi_gpu_rank_split() {
  local gpus log=$LOG_DIR/multi_gpu_bench.log torchrun=(python3 -m torch.distributed.run --standalone)
  gpus=$(multi_gpu_ready "bench rank-split first call") || return 0
  local one=$OUT_DIR/rank_split_1gpu.json many=$OUT_DIR/rank_split_${gpus}gpu.json
  if NCCL_NVLS_ENABLE=0 "${torchrun[@]}" --nproc-per-node=1 bench/distributed/rank_split_first_call.py >"$one" 2>>"$log" &&
     NCCL_NVLS_ENABLE=0 "${torchrun[@]}" --nproc-per-node="$gpus" bench/distributed/rank_split_first_call.py >"$many" 2>>"$log"; then
    record "bench rank-split first call" PASS "$(python3 -c 'import json, sys
one, many = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:3])
n = many["ranks"]
print("%.2f s on %d GPUs vs %.2f s on 1: x%.2f (target <= 1.2/%d = %.2f)" % (many["first_call_s"], n, one["first_call_s"], many["first_call_s"] / one["first_call_s"], n, 1.2 / n))' "$one" "$many")"
  else
    tail -n 20 "$log"
    record "bench rank-split first call" FAIL "see $log"
  fi
}
STEPS+=(step_multi_gpu_rank_split)

step_multi_gpu_allgather_bench() {
  local gpus log=$LOG_DIR/multi_gpu_bench.log torchrun=(python3 -m torch.distributed.run --standalone)
  gpus=$(multi_gpu_ready "bench all-gather+GEMM") || return 0
  local agemm=$OUT_DIR/allgather_gemm.json
  if NCCL_NVLS_ENABLE=0 "${torchrun[@]}" --nproc-per-node="$gpus" bench/distributed/allgather_gemm_bench.py \
       --out "$agemm" >>"$log" 2>&1; then
    record "bench all-gather+GEMM ($gpus GPUs)" PASS "$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("tuned %.3f ms, best fixed %.3f, worst %.3f, torch %.3f; regret %.1f%%" % (r["tuned"]["ms"], r["best_fixed"]["ms"], r["worst_fixed"]["ms"], r["torch_all_gather_matmul_ms"], 100 * r["regret_vs_oracle"]))' "$agemm")"
  else
    tail -n 30 "$log"
    record "bench all-gather+GEMM ($gpus GPUs)" FAIL "see $log"
  fi
}
STEPS+=(step_multi_gpu_allgather_bench)

# 50 repetitions of each fault (kill, hang), 16 two-rank jobs at a time sharing the GPUs.
step_multi_gpu_stress() {
  local gpus log=$LOG_DIR/multi_gpu_stress.log
  gpus=$(multi_gpu_ready "fault stress (kill, hang)") || return 0
  local repeats=${DISTTUNE_GPU_CHECK_STRESS_REPEATS:-50} jobs=${DISTTUNE_GPU_CHECK_STRESS_JOBS:-16}
  local stress=$OUT_DIR/stress_faults.json
  if NCCL_NVLS_ENABLE=0 python3 bench/distributed/stress_faults.py --ranks "$gpus" --repeats "$repeats" \
       --jobs "$jobs" >"$stress" 2>>"$log"; then
    record "fault stress (kill, hang) x$repeats" PASS "$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(", ".join("%s: %d/%d named, %d hangs, error after <= %ss" % (f, v["named"], v["repeats"], v["hang"], v["error_after_s_max"]) for f, v in r["faults"].items()) + "; %s s, %d jobs at once" % (r["wall_s"], r["jobs_at_once"]))' "$stress")"
  else
    tail -n 20 "$log"
    record "fault stress (kill, hang) x$repeats" FAIL "$(cat "$stress")"
  fi
}
STEPS+=(step_multi_gpu_stress)

print_table() {
  echo
  echo "== GPU check: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  # The compile threads' cores: logical CPUs, and the physical cores under them (hyperthreads
  # share one), which bound what more compile threads or ranks on one host can gain.
  echo "== CPU: $(nproc) logical CPUs; $(lscpu 2>/dev/null | grep -E '^(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\))' | tr -s ' ' | paste -sd';' -)"
  printf '%-34s | %-6s | %s\n' "test / benchmark" "result" "key figure"
  printf '%-34s-+-%-6s-+-%s\n' "----------------------------------" "------" "----------"
  while IFS=$'\t' read -r what result figure; do
    printf '%-34s | %-6s | %s\n' "$what" "$result" "$figure"
  done <"$RESULTS"
}

# The check in parts that each fit the device's 10-minute call (H200 seconds measured on
# 2026-12-05 where known): `scripts/gpu_check.sh --part N`; --parts lists them. A part whose
# steps need the CUDA build starts with step_build (the build folder is kept on a warm machine).
PARTS=(
  ""
  "step_build step_unit_tests step_gpu_tests step_example_scale step_example_gemm step_example_contextual step_bench_gemm step_bench_hit step_multi_rank step_no_deadline"  # 231 s
  "step_python step_triton_dropin"                                                                                            # 348 s
  "step_real_libs_fla"                                                                                                        # ~330 s
  "step_real_libs_others"                                                                                                     # ~150 s
  "step_pipeline_bench"                                                                                                       # 270 s
  "step_search_live step_near_ties step_isolation_bench"
  "step_many_shapes"                                                                                                          # 6-8 min
  "step_build step_bench_suite"
  "step_build step_multi_gpu step_multi_gpu_nccl_cpp step_multi_gpu_wall_time step_multi_gpu_rank_split step_multi_gpu_allgather_bench step_multi_gpu_stress"  # several GPUs
)
if [[ ${1:-} == --parts ]]; then
  for ((i = 1; i < ${#PARTS[@]}; ++i)); do echo "part $i: ${PARTS[i]}"; done
  # A step in no part would never run where calls are limited: refused.
  unplaced=0
  for step in "${STEPS[@]}"; do
    if [[ " ${PARTS[*]} " != *" $step "* ]]; then
      echo "gpu_check: $step is in no part" >&2
      unplaced=1
    fi
  done
  exit "$unplaced"
fi
if [[ ${1:-} == --part ]]; then
  if ! [[ ${2:-} =~ ^[0-9]+$ ]] || ((${2} < 1 || ${2} >= ${#PARTS[@]})); then
    echo "gpu_check: --part takes 1 to $((${#PARTS[@]} - 1)) (--parts lists them)" >&2
    exit 2
  fi
  read -r -a STEPS <<<"${PARTS[$2]}"
  set --
fi
if (($#)); then STEPS=("$@"); fi
for step in "${STEPS[@]}"; do
  echo "=== $step"
  if ! "$step" && [[ $step == step_build ]]; then break; fi
done
print_table
! grep -q $'\tFAIL\t' "$RESULTS"
