#!/usr/bin/env bash
# Runs a job that must fail: passes if it exits non-zero within <max seconds> (an integer) and its output
# matches every <pattern> (grep -E). The time runs from the job's start or, with --from-mark, from the
# earliest "test mark: <ms since the epoch>" line that the job printed (tests/mpi/test_mark.hpp), so that
# a slow start of mpirun on a loaded machine does not count against the deadline under test.
# Usage: expect_job_failure.sh [--from-mark] <max seconds> <pattern>... -- <command>...
set -u
from_mark=0
if [[ ${1:-} == "--from-mark" ]]; then
  from_mark=1
  shift
fi
max_seconds=$1
shift
patterns=()
while [[ $# -gt 0 && $1 != "--" ]]; do
  patterns+=("$1")
  shift
done
if [[ $# -lt 2 ]]; then
  echo "usage: expect_job_failure.sh [--from-mark] <max seconds> <pattern>... -- <command>..." >&2
  exit 2
fi
shift
output=$(mktemp)
trap 'rm -f "$output"' EXIT
start_ms=$(($(date +%s%N) / 1000000))
timeout --kill-after=5 "$((max_seconds + 60))" "$@" >"$output" 2>&1
status=$?
end_ms=$(($(date +%s%N) / 1000000))
cat "$output"
failed=0
since="job start"
if ((from_mark)); then
  mark_ms=$(grep -oE '^test mark: [0-9]+' "$output" | grep -oE '[0-9]+$' | sort -n | head -n 1)
  if [[ -z $mark_ms ]]; then
    echo "FAIL: the job printed no 'test mark: <ms>' line" >&2
    failed=1
  else
    start_ms=$mark_ms
    since="the earliest test mark"
  fi
fi
elapsed_ms=$((end_ms - start_ms))
elapsed=$((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000)))
echo "--- job exit status $status after ${elapsed} s from ${since} (limit ${max_seconds} s)"
if [[ $status -eq 0 ]]; then
  echo "FAIL: the job exited 0; it should have failed" >&2
  failed=1
fi
if [[ $status -eq 124 || $status -eq 137 ]]; then
  echo "FAIL: the job hung and was killed by timeout(1)" >&2
  failed=1
fi
if ((elapsed_ms > max_seconds * 1000)); then
  echo "FAIL: the job took ${elapsed} s from ${since}, more than ${max_seconds} s" >&2
  failed=1
fi
for pattern in "${patterns[@]}"; do
  if ! grep -Eq -- "$pattern" "$output"; then
    echo "FAIL: the output does not match: $pattern" >&2
    failed=1
  fi
done
exit $failed
