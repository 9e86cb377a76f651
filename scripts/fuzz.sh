#!/usr/bin/env bash
# Builds the fuzz targets of tests/fuzz (clang, libFuzzer, ASan + UBSan) and runs each for
# a bounded time from its seed corpus; fails on any crash, leak or sanitizer report.
# Usage: scripts/fuzz.sh [seconds per target, default 60; the small targets readable_text and
# redis_reply (non-UTF-8 text, a hostile Redis peer) run at most 10 s] [build|run|all, default
# all: build only, run what is built, or both]. Crash inputs are left in
# build/fuzz/artifacts/<target>/ (turn each into a regression test in tests/unit).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
phase="${2:-all}"
build=build/fuzz
case "$phase" in
  build | run | all) ;;
  *) echo "fuzz: the phase is build, run or all, not '$phase'" >&2; exit 2 ;;
esac
if [[ $phase != run ]]; then
  CXX="${DISTTUNE_FUZZ_CXX:-clang++-14}" cmake -S tests/fuzz -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build"
fi
[[ $phase != build ]] || exit 0
for target in record_reader replay_table canonical_json readable_text redis_reply; do
  budget="$seconds"
  case "$target" in readable_text | redis_reply) budget=$((seconds < 10 ? seconds : 10)) ;; esac
  corpus="$build/corpus/$target"
  artifacts="$build/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  # New inputs go to the build tree; the seed corpus in the repository stays small.
  "$build/fuzz_$target" "$corpus" "tests/fuzz/corpus/$target" \
    -max_total_time="$budget" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 2>"$build/fuzz_$target.log" || {
    tail -n 40 "$build/fuzz_$target.log"
    echo "fuzz: $target failed; the input is in $artifacts" >&2
    exit 1
  }
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz_$target.log")
  echo "fuzz: $target: $runs runs in ${budget} s, no crash"
done
