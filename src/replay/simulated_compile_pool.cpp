// SimulatedCompilePool: list scheduling of recorded compile times on a simulated clock, the
// compiles sharing the cores or not.
#include "replay/simulated_compile_pool.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace disttune::detail {

SimulatedCompilePool::SimulatedCompilePool(std::vector<double> compile_s, int threads, double setup_s, int cores)
    : compile_s_(std::move(compile_s)),
      threads_(static_cast<std::size_t>(std::max(threads, 0))),
      setup_s_(setup_s),
      cores_(cores),
      queued_(compile_s_.size(), false),
      began_(compile_s_.size()),
      ended_(compile_s_.size()) {
  if (threads < 1) throw std::invalid_argument("disttune: a compile pool needs at least one thread");
  if (!(setup_s >= 0.0) || std::isinf(setup_s))
    throw std::invalid_argument("disttune: a compile pool's set-up must be finite and >= 0 seconds");
  if (cores < 0) throw std::invalid_argument("disttune: a compile pool's shared cores must be >= 0 (0: not shared)");
  if (cores_ > 0) {
    const double share = std::min(1.0, static_cast<double>(cores_) / kRecordedCompilesAtOnce);
    for (double& seconds : compile_s_) seconds *= share;
  }
}

void SimulatedCompilePool::start_free() {
  while (running_.size() < threads_ && !queue_.empty()) {
    const std::size_t c = queue_.front();
    queue_.pop_front();
    began_[c] = clock_;
    running_.push_back({c, compile_s_[c]});
  }
}

template <typename Done>
void SimulatedCompilePool::run_until(double until, Done done) {
  start_free();
  // Each pass ends a compile or returns; compiles that end at `until` itself end here.
  while (!done()) {
    if (running_.empty()) {
      if (!std::isinf(until)) clock_ = std::max(clock_, until);
      return;
    }
    if (clock_ < setup_s_) {  // nothing compiles before the set-up ends
      if (setup_s_ > until) {
        clock_ = until;
        return;
      }
      clock_ = setup_s_;
      continue;
    }
    const double rate =
        cores_ > 0 ? std::min(1.0, static_cast<double>(cores_) / static_cast<double>(running_.size())) : 1.0;
    double least_left = std::numeric_limits<double>::infinity();
    for (const Running& r : running_) least_left = std::min(least_left, r.work_left);
    const double end = clock_ + least_left / rate;
    if (end > until) {
      for (Running& r : running_) r.work_left -= (until - clock_) * rate;
      clock_ = until;
      return;
    }
    clock_ = end;
    for (Running& r : running_) r.work_left -= least_left;
    std::erase_if(running_, [&](const Running& r) {
      if (r.work_left > 1e-12) return false;
      ended_[r.candidate] = clock_;
      return true;
    });
    start_free();
  }
}

void SimulatedCompilePool::run_to(double at) {
  run_until(at, [] { return false; });
}

void SimulatedCompilePool::queue(std::size_t candidate) {
  if (queued_.at(candidate)) return;
  queued_[candidate] = true;
  queue_.push_back(candidate);
}

double SimulatedCompilePool::prepare(double at, std::span<const std::size_t> now,
                                     std::span<const std::size_t> ahead) {
  run_to(at);
  for (std::size_t c : now) queue(c);
  for (std::size_t c : ahead) queue(c);
  // Nothing else is queued while the caller waits, so the pool may run to the last of `now`:
  // no later call is earlier.
  run_until(std::numeric_limits<double>::infinity(), [&] {
    return std::all_of(now.begin(), now.end(), [&](std::size_t c) { return ended_[c].has_value(); });
  });
  return std::max(at, clock_);
}

double SimulatedCompilePool::first_ended(double at, std::span<const std::size_t> candidates) {
  run_to(at);
  for (std::size_t c : candidates) queue(c);
  // The caller may stop waiting sooner and queue more: a copy runs ahead, this pool does not.
  SimulatedCompilePool ahead = *this;
  ahead.run_until(std::numeric_limits<double>::infinity(), [&] {
    return std::any_of(candidates.begin(), candidates.end(), [&](std::size_t c) { return ahead.ended_[c].has_value(); });
  });
  return std::max(at, ahead.clock_);
}

std::optional<double> SimulatedCompilePool::finished(std::size_t c, double at) {
  run_to(at);
  if (!ended_.at(c)) return std::nullopt;
  return *ended_[c] - std::max(*began_[c], setup_s_);
}

std::size_t SimulatedCompilePool::started_by(double at) const {
  std::size_t count = 0;
  for (std::size_t c = 0; c < began_.size(); ++c) count += started(c, at) ? 1 : 0;
  return count;
}

bool SimulatedCompilePool::started(std::size_t c, double at) const {
  return began_.at(c) && *began_.at(c) <= at;
}

}  // namespace disttune::detail
