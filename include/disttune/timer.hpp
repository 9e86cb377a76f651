// The Timer seam: how one run of a candidate is timed (CPU clock, device events, ...).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "disttune/config.hpp"

namespace disttune {

/// Marks the start and stop of runs and resolves their durations. A device timer may
/// resolve them only later (collect()), so drivers mark a batch and collect once.
class Timer {
 public:
  virtual ~Timer() = default;
  /// Called once before a tuning's first run (warm-ups included). Throws to refuse the
  /// tuning, e.g. when the device stream is being captured into a graph.
  virtual void begin_tuning() {}
  /// Work needed before each timed run but outside its timed region (an L2 flush).
  virtual void prepare_timed_run() {}
  /// True if prepare_timed_run() clears the device cache before each timed run. The ranks
  /// compare it before tuning and the record keeps it (measurement.flush_l2).
  virtual bool flushes_l2() const { return false; }
  virtual void start() = 0;
  virtual void stop() = 0;
  /// Waits for every start/stop pair since the last collect and returns their durations in
  /// milliseconds, in order. A pair whose start has no stop is an error. The engine calls it
  /// once per round, after the round's last run, so pairs of several candidates wait here.
  virtual std::vector<double> collect() = 0;
  /// True if pairs of several candidates may wait for one collect (the engine collects a
  /// round at its end); false makes the engine collect before each change of candidate (a
  /// timer whose runs happen in a worker that times one candidate at a time).
  virtual bool holds_pairs_across_candidates() const { return true; }
  /// Optionally times `runs` runs of `run` as a batch (e.g. CUDA-graph replay) and returns
  /// `runs` per-run times in ms; nullopt means "time them one by one with start/stop".
  virtual std::optional<std::vector<double>> time_batch(const std::function<void()>& run,
                                                        int runs) {
    (void)run;
    (void)runs;
    return std::nullopt;
  }
  /// Short name for logs ("cpu", "cuda").
  virtual std::string name() const = 0;
  /// Facts about the timed device that make its results differ (model, memory, ...);
  /// they join the hardware fingerprint.
  virtual Value hardware() const { return Value::object(); }
  /// Software versions that matter for the timed device (driver, runtime).
  virtual Value deps() const { return Value::object(); }
  /// What the device's clocks were during the last tuning (CudaTimer: the SM clock), for
  /// the record; not part of the fingerprint. {} when the timer does not know.
  virtual Value clocks() const { return Value::object(); }
};

/// Host steady-clock timer: start/stop read std::chrono::steady_clock.
class CpuTimer final : public Timer {
 public:
  void start() override;
  void stop() override;
  std::vector<double> collect() override;
  std::string name() const override { return "cpu"; }

 private:
  std::vector<long long> starts_ns_;
  std::vector<double> durations_ms_;
};

}  // namespace disttune
