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

  /// The compiles running while cores are shared: each one's work left, in seconds at full speed.
  struct Running {
    std::size_t candidate;
    double work_left;
  };
  /// Shared cores: the clock moves to `until` (or to the first moment `done` holds, if
  /// sooner), compiles starting as threads free up and ending as their work is done.
  template <typename Done>
  void share_until(double until, Done done);
  /// Shared cores: starts queued compiles while a thread is free, at clock_.
  void start_free();

  std::vector<double> compile_s_;
  double setup_s_;
  int cores_;
  double clock_ = 0.0;            ///< shared cores: how far the pool has run
  std::vector<Running> running_;  ///< shared cores: in flight
  std::vector<std::optional<double>> ended_;  ///< shared cores: per candidate, when its compile ended
  std::vector<double> free_at_;  ///< per thread: when its last compile ends
  std::deque<Queued> queue_;     ///< queued, not started, in order
  std::vector<bool> queued_;     ///< per candidate: ever queued
  std::vector<std::optional<double>> began_;  ///< per candidate: when its compile started
};

}  // namespace disttune::detail
