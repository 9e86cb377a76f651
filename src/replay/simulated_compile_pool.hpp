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
///
/// With `cores` > 0 the compiles in flight share that many cores (processor sharing): n of
/// them at once each go at min(1, cores / n) of full speed, and a compile's work is its
/// recorded seconds times min(1, cores / kRecordedCompilesAtOnce), as recorded with that many
/// at once. Its reported seconds (finished()) are then its wall time, as a front end times it.
class SimulatedCompilePool {
 public:
  /// bench/replay/record_table.py compiles a table's configs this many at once (the device's
  /// 16 cores), so its compile times are each compile's share of 16 running together.
  static constexpr int kRecordedCompilesAtOnce = 16;

  /// `compile_s[c]`: candidate c's compile time; `threads` >= 1, `setup_s` >= 0 and
  /// `cores` >= 0 (0: each compile lasts its recorded seconds whatever runs beside it; else
  /// std::invalid_argument).
  SimulatedCompilePool(std::vector<double> compile_s, int threads, double setup_s = 0.0, int cores = 0);

  /// At time `at`: queues `now`, then `ahead`, skipping candidates queued before; returns
  /// the time at which every candidate of `now` is compiled (at least `at`). No later call
  /// may be earlier than that.
  double prepare(double at, std::span<const std::size_t> now, std::span<const std::size_t> ahead);
  /// At time `at`: when the first of `candidates` to end its compile ends (at least `at`);
  /// one never queued is queued then. The pool itself runs only to `at`: the caller may
  /// stop waiting sooner and queue more.
  double first_ended(double at, std::span<const std::size_t> candidates);

  /// Candidates whose compile started by time `at` (what a call that ends then compiled).
  std::size_t started_by(double at) const;
  /// Whether candidate c's compile started by time `at`.
  bool started(std::size_t c, double at) const;
  /// At time `at` (no earlier than any call before): candidate c's compile seconds, from its
  /// start or the set-up's end (the Python front ends time a compile from the set-up's end,
  /// python/disttune/_triton_setup.py), if it has ended by then, else nullopt (queued,
  /// running, or never queued). Unshared, its recorded seconds.
  std::optional<double> finished(std::size_t c, double at);

 private:
  /// A compile in flight: its work left, in seconds at full speed.
  struct Running {
    std::size_t candidate;
    double work_left;
  };
  /// Moves the clock to `until`, or to the first moment `done` holds if sooner: queued
  /// compiles start as threads free up, and end as their work is done.
  template <typename Done>
  void run_until(double until, Done done);
  /// Moves the clock to `at`.
  void run_to(double at);
  /// Starts queued compiles, first in first out, while a thread is free.
  void start_free();
  void queue(std::size_t candidate);

  std::vector<double> compile_s_;  ///< per candidate: its work, seconds at full speed
  std::size_t threads_;
  double setup_s_;
  int cores_;
  double clock_ = 0.0;  ///< how far the pool has run
  std::deque<std::size_t> queue_;  ///< queued, not started, in order
  std::vector<Running> running_;
  std::vector<bool> queued_;  ///< per candidate: ever queued
  std::vector<std::optional<double>> began_;  ///< per candidate: when its compile started
  std::vector<std::optional<double>> ended_;  ///< per candidate: when its compile ended
};

}  // namespace disttune::detail
