#!/usr/bin/env bash
# Runs a job that must fail: passes if it exits non-zero within <max seconds> (an integer) and its output
# matches every <pattern> (grep -E). Usage: expect_job_failure.sh <max seconds> <pattern>... -- <command>...
set -u
max_seconds=$1
shift
patterns=()
while [[ $# -gt 0 && $1 != "--" ]]; do
  patterns+=("$1")
  shift
done
if [[ $# -lt 2 ]]; then
  echo "usage: expect_job_failure.sh <max seconds> <pattern>... -- <command>..." >&2
  exit 2
fi
shift
output=$(mktemp)
trap 'rm -f "$output"' EXIT
start_ms=$(($(date +%s%N) / 1000000))
timeout --kill-after=5 "$((max_seconds + 30))" "$@" >"$output" 2>&1
status=$?
elapsed_ms=$(($(date +%s%N) / 1000000 - start_ms))
elapsed=$((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000)))
cat "$output"
echo "--- job exit status $status after ${elapsed} s (limit ${max_seconds} s)"
failed=0
if [[ $status -eq 0 ]]; then
  echo "FAIL: the job exited 0; it should have failed" >&2
  failed=1
fi
if [[ $status -eq 124 || $status -eq 137 ]]; then
  echo "FAIL: the job hung and was killed by timeout(1)" >&2
  failed=1
fi
if ((elapsed_ms > max_seconds * 1000)); then
  echo "FAIL: the job took ${elapsed} s, more than ${max_seconds} s" >&2
  failed=1
fi
for pattern in "${patterns[@]}"; do
  if ! grep -Eq -- "$pattern" "$output"; then
    echo "FAIL: the output does not match: $pattern" >&2
    failed=1
  fi
done
exit $failed
