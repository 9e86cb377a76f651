// CpuTimer: host steady-clock timing of runs.
#include <chrono>
#include <stdexcept>

#include "disttune/timer.hpp"

namespace disttune {
namespace {
long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void CpuTimer::start() {
  if (starts_ns_.size() > durations_ms_.size()) {
    throw std::logic_error("disttune: CpuTimer::start() twice without stop()");
  }
  starts_ns_.push_back(now_ns());
}

void CpuTimer::stop() {
  const long long end = now_ns();
  if (starts_ns_.size() != durations_ms_.size() + 1) {
    throw std::logic_error("disttune: CpuTimer::stop() without start()");
  }
  durations_ms_.push_back(static_cast<double>(end - starts_ns_.back()) / 1e6);
}

std::vector<double> CpuTimer::collect() {
  if (starts_ns_.size() != durations_ms_.size()) {
    throw std::logic_error("disttune: CpuTimer::collect() with a run still started");
  }
  starts_ns_.clear();
  return std::exchange(durations_ms_, {});
}

}  // namespace disttune
