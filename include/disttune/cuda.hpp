// CudaTimer: times runs with CUDA events on the caller's stream; the driver is loaded at
// run time, so a program using it runs (and reports why not) without a GPU.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "disttune/timer.hpp"

namespace disttune {

/// How a CudaTimer measures.
struct CudaTimerOptions {
  /// The stream the launcher runs on (a CUstream or cudaStream_t); nullptr is the legacy
  /// default stream, which cannot be captured into a graph.
  void* stream = nullptr;
  /// Clear the device's L2 cache on the stream before every timed run, outside the timed
  /// region (prepare_timed_run()), so each run starts cold.
  bool flush_l2 = false;
  /// If > 0, time_batch() captures this many runs into one CUDA graph and times replays of
  /// it: each sample is one replay's time over graph_runs. For launch-bound launchers.
  int graph_runs = 0;
  /// Clock control: before a tuning, on a device below 60% of its rated SM clock (idle),
  /// busy kernels on every SM (1 ms each, at most 20 ms) bring the clock to 90% of rated
  /// (or until it stops rising at 60% or more), and the clock reached is measured
  /// (clock64 against %globaltimer) as the steady clock; the clock is measured
  /// again after every timed run (outside its events), and a run below 75% of the steady
  /// clock is discarded and taken again; a busy kernel (the lead, 0.1 ms) runs ahead of a
  /// timed run that finds the stream dry, and a run whose start event completed before its
  /// launch returned (the host's launch inside the pair) is discarded and, for a launch the
  /// lead can cover, every later run without enough device time queued ahead is led
  /// (docs/strategies.md, "Clock control");
  /// while the host captures a graph, a 1 ms busy kernel keeps the device from idling. The
  /// card's clock settings are never changed.
  bool steady_clock = true;
};

/// Why CUDA cannot be used in this process (no libcuda.so.1, too old, no device), or
/// nullopt if it can.
std::optional<std::string> cuda_unavailable_reason();

/// A Timer for work enqueued on one CUDA stream: each run is bracketed by a pair of events
/// recorded on that stream, and collect() waits once for the batch. Events come from a
/// pool and are reused. Every driver error throws std::runtime_error naming the call and
/// the CUDA error. Refuses (throws) to time a stream that is being captured into a graph,
/// leaving the capture intact. Not thread-safe: one tuning at a time.
class CudaTimer final : public Timer {
 public:
  /// Binds to options.stream's context and device (for the default stream: the current
  /// context, else device 0's primary context). Throws if CUDA cannot be used, or if
  /// graph_runs is negative.
  explicit CudaTimer(CudaTimerOptions options = {});
  ~CudaTimer() override;
  CudaTimer(CudaTimer&&) noexcept;
  CudaTimer& operator=(CudaTimer&&) noexcept;
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  /// Throws if the stream is being captured.
  void begin_tuning() override;
  /// Clears the L2 cache on the stream if options.flush_l2.
  void prepare_timed_run() override;
  /// options.flush_l2.
  bool flushes_l2() const override;
  void start() override;
  void stop() override;
  std::vector<double> collect() override;
  /// With graph_runs > 0: `runs` per-run times from graph replays (each replay preceded by
  /// prepare_timed_run()). If the capture fails (for example the launcher synchronizes, or
  /// the stream is the legacy default stream) it notes why on stderr once and returns
  /// nullopt, so runs are timed one by one. An exception from `run` ends the capture and
  /// propagates. With graph_runs == 0: nullopt.
  std::optional<std::vector<double>> time_batch(const std::function<void()>& run,
                                                int runs) override;
  std::string name() const override { return "cuda"; }
  /// {"cuda": {"device", "device_count", "compute_capability", "sm_count", "memory_bytes",
  /// "l2_bytes", and "nvlink_full_mesh" when NVML can tell for several devices}}.
  Value hardware() const override;
  /// {"cuda_driver": "13.0", "cuda_runtime": "13.0" (if libcudart is loaded)}.
  Value deps() const override;
  /// With steady_clock: {"steady_sm_mhz", "lowest_sm_mhz" (of a timed run), "discarded_runs"
  /// (below the slow clock), "gapped_runs" (discarded: the device waited for the host's
  /// launch inside the pair), "host_bound_runs" (such gaps kept: no lead could cover them),
  /// "lead_ms" (the lead's device time at the end)} of the last tuning; else {}.
  Value clocks() const override;

  const CudaTimerOptions& options() const;
  /// The ordinal of the device the stream belongs to.
  int device() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace disttune
