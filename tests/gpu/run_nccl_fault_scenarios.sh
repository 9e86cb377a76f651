#!/usr/bin/env bash
# Runs every scenario of nccl_fault_scenarios under mpirun, one GPU per rank; prints one line
# per scenario and exits non-zero if any failed. Usage: run_nccl_fault_scenarios.sh <binary> <ranks>
# The fault scenarios (a rank killed, a rank hung) must end the job within deadline (2 s) + 5 s
# + start-up, with every other rank naming the missing one (tests/mpi/expect_job_failure.sh).
set -u
binary=$1
ranks=$2
here=$(cd "$(dirname "$0")" && pwd)
# --enable-recovery: a killed rank does not make mpirun end the others, so they can raise.
mpirun=(mpirun --allow-run-as-root --oversubscribe --enable-recovery -np "$ranks"
        -x NCCL_NVLS_ENABLE=0 -x TRITON_DIST_AUTOTUNE_TIMEOUT=2)
last=$((ranks - 1))
failed=0
for scenario in max_rule record_on_some_ranks divergent_prune failing_config; do
  dir=$(mktemp -d)
  output=$(timeout --kill-after=5 120 "${mpirun[@]}" "$binary" "$scenario" "$dir" 2>&1)
  status=$?
  rm -rf "$dir"
  passes=$(grep -c ": $scenario: PASS" <<<"$output")
  if [[ $status -eq 0 && $passes -eq $ranks ]]; then
    echo "PASS $scenario: $(grep -m1 ": $scenario: PASS" <<<"$output")"
  else
    echo "$output"
    echo "FAIL $scenario: exit status $status, $passes of $ranks ranks passed"
    failed=1
  fi
done
for scenario in killed_rank hung_rank; do
  dir=$(mktemp -d)
  # 20 s: NCCL's start (a few seconds) + the deadline (2 s) + 0.5 s roll call + 5 s spare.
  if output=$("$here/../mpi/expect_job_failure.sh" 20 \
       ": $scenario: PASS raised" \
       "phase 'barrier before timed runs' of function 'nccl_$scenario', key 7, candidate 1" \
       "ranks that did not arrive: $last " \
       -- "${mpirun[@]}" "$binary" "$scenario" "$dir" 2>&1); then
    echo "PASS $scenario: $(grep -m1 -oE "$scenario: PASS raised [0-9.]+ s after the fault" <<<"$output")"
  else
    echo "$output"
    echo "FAIL $scenario"
    failed=1
  fi
  rm -rf "$dir"
done
exit $failed
