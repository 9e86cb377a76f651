// SimulatedCompilePool: list scheduling of recorded compile times on a simulated clock.
#include "replay/simulated_compile_pool.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace disttune::detail {

SimulatedCompilePool::SimulatedCompilePool(std::vector<double> compile_s, int threads, double setup_s)
    : compile_s_(std::move(compile_s)), setup_s_(setup_s), queued_(compile_s_.size(), false), began_(compile_s_.size()) {
  if (threads < 1) throw std::invalid_argument("disttune: a compile pool needs at least one thread");
  if (!(setup_s >= 0.0) || std::isinf(setup_s))
    throw std::invalid_argument("disttune: a compile pool's set-up must be finite and >= 0 seconds");
  free_at_.assign(static_cast<std::size_t>(threads), 0.0);
}

void SimulatedCompilePool::start_next() {
  const auto thread = std::min_element(free_at_.begin(), free_at_.end());
  const Queued next = queue_.front();
  queue_.pop_front();
  const double start = std::max(*thread, next.since);
  began_[next.candidate] = start;
  *thread = end_of(next.candidate);
}

double SimulatedCompilePool::end_of(std::size_t c) const { return std::max(*began_[c], setup_s_) + compile_s_[c]; }

void SimulatedCompilePool::start_until(double until) {
  while (!queue_.empty() &&
         std::max(*std::min_element(free_at_.begin(), free_at_.end()), queue_.front().since) <= until) {
    start_next();
  }
}

void SimulatedCompilePool::queue(std::size_t candidate, double at) {
  if (queued_.at(candidate)) return;
  queued_[candidate] = true;
  queue_.push_back({candidate, at});
}

double SimulatedCompilePool::prepare(double at, std::span<const std::size_t> now,
                                     std::span<const std::size_t> ahead) {
  start_until(at);
  for (std::size_t c : now) queue(c, at);
  for (std::size_t c : ahead) queue(c, at);
  // Nothing else is queued while the caller waits: the compiles before those of `now` start
  // as the threads free up.
  double ready = at;
  for (std::size_t c : now) {
    while (!began_[c]) start_next();
    ready = std::max(ready, end_of(c));
  }
  return ready;
}

double SimulatedCompilePool::first_ended(double at, std::span<const std::size_t> candidates) {
  start_until(at);
  for (std::size_t c : candidates) queue(c, at);
  double first = std::numeric_limits<double>::infinity();
  for (std::size_t c : candidates) {
    while (!began_[c]) start_next();
    first = std::min(first, end_of(c));
  }
  return std::max(at, first);
}

std::optional<double> SimulatedCompilePool::finished(std::size_t c, double at) {
  start_until(at);
  if (!began_.at(c) || end_of(c) > at) return std::nullopt;
  return compile_s_[c];
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
