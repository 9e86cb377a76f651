// SimulatedCompilePool: the replay's model of the compile pipeline's thread pool, on a simulated clock.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <span>
#include <vector>

namespace disttune::detail {

/// `threads` compile threads taking queued candidates first in, first out, each compile
/// lasting its recorded seconds, as the thread pool of python/disttune/_prepare.py's
/// CompilePipeline does. A compiler's one-time set-up in a fresh process (`setup_s`) holds
/// every compile started before it ends: those end setup_s plus their own seconds in. Times
/// are seconds on the caller's clock, which never goes back.
class SimulatedCompilePool {
 public:
  /// `compile_s[c]`: candidate c's compile time; `threads` >= 1 and `setup_s` >= 0 (else
  /// std::invalid_argument).
  SimulatedCompilePool(std::vector<double> compile_s, int threads, double setup_s = 0.0);

  /// At time `at`: queues `now`, then `ahead`, skipping candidates queued before; returns
  /// the time at which every candidate of `now` is compiled (at least `at`). No later call
  /// may be earlier than that.
  double prepare(double at, std::span<const std::size_t> now, std::span<const std::size_t> ahead);
  /// At time `at`: when the first of `candidates` to end its compile ends (at least `at`);
  /// one never queued is queued then. No later call may be earlier than that.
  double first_ended(double at, std::span<const std::size_t> candidates);

  /// Candidates whose compile started by time `at` (what a call that ends then compiled).
  std::size_t started_by(double at) const;
  /// Whether candidate c's compile started by time `at`.
  bool started(std::size_t c, double at) const;
  /// At time `at` (no earlier than any call before): candidate c's own compile seconds (the
  /// set-up not included: the Python front ends time a compile from the set-up's end,
  /// python/disttune/_triton_setup.py) if it has ended by then, else nullopt (queued,
  /// running, or never queued).
  std::optional<double> finished(std::size_t c, double at);

 private:
  struct Queued {
    std::size_t candidate;
    double since;  ///< when it was queued
  };
  /// Starts queued compiles, in queue order, that a thread takes by time `until`.
  void start_until(double until);
  /// Starts the first queued compile on the first thread free.
  void start_next();
  void queue(std::size_t candidate, double at);
  /// When started candidate c's compile ends.
  double end_of(std::size_t c) const;

  std::vector<double> compile_s_;
  double setup_s_;
  std::vector<double> free_at_;  ///< per thread: when its last compile ends
  std::deque<Queued> queue_;     ///< queued, not started, in order
  std::vector<bool> queued_;     ///< per candidate: ever queued
  std::vector<std::optional<double>> began_;  ///< per candidate: when its compile started
};

}  // namespace disttune::detail
