#!/usr/bin/env python3
"""Runs each multi-rank fault of stress_faults many times under mpirun and reports, per
fault, how many runs behaved as expected, how many hung (killed at the hang limit), and the
job's wall time (for the faults that must end in an error: the time to the error)."""
import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time

# fault -> (job must fail?, check(output, ranks) -> problem text or None)
def expect_timeout(stuck_of):
    def check(output, ranks):
        stuck = stuck_of(ranks)
        if f"ranks that did not arrive: {stuck} " not in output:
            return f"no error naming rank {stuck} as missing"
        if "phase 'barrier before timed runs' of function 'stress', key 1, candidate 1" not in output:
            return "the error does not name the phase, key and candidate"
        return None
    return True, check


def expect_all(what):
    def check(output, ranks):
        seen = re.findall(r"OUTCOME rank=(\d+) (\S+)", output)
        got = {int(rank): outcome for rank, outcome in seen}
        if sorted(got) != list(range(ranks)):
            return f"outcomes from ranks {sorted(got)} only"
        wrong = {rank: outcome for rank, outcome in got.items() if outcome != what}
        return f"unexpected outcomes {wrong}" if wrong else None
    return False, check


def expect_job_ends():
    return True, lambda output, ranks: None


FAULTS = {
    "stuck-last": expect_timeout(lambda ranks: ranks - 1),
    "stuck-first": expect_timeout(lambda ranks: 0),
    "rank-exits": expect_job_ends(),
    "divergent-prune": expect_all("rank-disagreement"),
    "fails-on-one-rank": expect_all("chose=1"),
    "record-on-one-rank": expect_all("chose=1"),
    "max-rule": expect_all("chose=1"),
}


def run_once(args, fault):
    must_fail, check = FAULTS[fault]
    with tempfile.TemporaryDirectory(prefix="disttune-stress-") as cache:
        command = [args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(args.ranks),
                   "-x", f"TRITON_DIST_AUTOTUNE_TIMEOUT={args.deadline}", args.program, fault, cache]
        start = time.monotonic()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.hang_limit)
        except subprocess.TimeoutExpired as expired:
            output = (expired.stdout or b"").decode(errors="replace") if isinstance(expired.stdout, bytes) else (expired.stdout or "")
            return "hang", time.monotonic() - start, output
        elapsed = time.monotonic() - start
    output = done.stdout + done.stderr
    if must_fail and done.returncode == 0:
        return "the job exited 0", elapsed, output
    if not must_fail and done.returncode != 0:
        return f"the job exited {done.returncode}", elapsed, output
    problem = check(output, args.ranks)
    return (problem or "ok"), elapsed, output


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--program", required=True, help="the stress_faults executable")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--deadline", type=float, default=2.0,
                        help="TRITON_DIST_AUTOTUNE_TIMEOUT for the jobs (seconds)")
    parser.add_argument("--hang-limit", type=float, default=60.0,
                        help="a job still running after this many seconds counts as a hang")
    parser.add_argument("--faults", nargs="*", default=list(FAULTS), choices=list(FAULTS))
    args = parser.parse_args()

    print(f"{args.runs} runs per fault, {args.ranks} ranks, deadline {args.deadline} s, "
          f"hang limit {args.hang_limit} s")
    print("| fault | runs | as expected | hangs | other problems | job wall time s (min / median / max) |")
    print("|---|---|---|---|---|---|")
    total_hangs = 0
    total_problems = 0
    for fault in args.faults:
        times, hangs, problems = [], 0, []
        for _ in range(args.runs):
            result, elapsed, output = run_once(args, fault)
            if result == "hang":
                hangs += 1
            elif result != "ok":
                problems.append(result)
                sys.stderr.write(f"--- {fault}: {result}\n{output[-3000:]}\n")
            else:
                times.append(elapsed)
        total_hangs += hangs
        total_problems += len(problems)
        timing = (f"{min(times):.2f} / {statistics.median(times):.2f} / {max(times):.2f}"
                  if times else "-")
        print(f"| {fault} | {args.runs} | {len(times)} | {hangs} | {len(problems)} | {timing} |",
              flush=True)
    print(f"hangs: {total_hangs}, other problems: {total_problems}")
    return 1 if total_hangs or total_problems else 0


if __name__ == "__main__":
    sys.exit(main())
