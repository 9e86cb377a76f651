// The mark a failing-job test program prints when its deadline starts to run (expect_job_failure.sh --from-mark).
#pragma once

#include <chrono>
#include <cstdio>

namespace disttune::test {

/// Prints "test mark: <ms since the epoch>" on its own line, flushed: expect_job_failure.sh
/// --from-mark measures the job's time from the earliest mark, not from mpirun's start.
inline void print_mark() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  std::fprintf(stderr, "test mark: %lld\n",
               static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  std::fflush(stderr);
}

}  // namespace disttune::test
