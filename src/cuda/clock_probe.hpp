// The SM clock seen from the device: a busy kernel that brings it to a steady state, and a probe that measures it.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "cuda_driver/cuda_types.hpp"
#include "cuda_driver/driver_resources.hpp"

namespace disttune::detail {

/// Kernels loaded from embedded PTX into the current context (no nvcc at build time): one
/// spins every SM for a while, one measures the SM clock (clock64 cycles against
/// %globaltimer nanoseconds over a short spin, as nvbench does). Both touch no user memory
/// and never change the card's clock settings. The kernels and counter buffers live as long
/// as the process: destroying a probe never waits for the device. Not thread-safe.
class ClockProbe {
 public:
  /// The kernels of the current context (loaded on its first probe), for `device`. Throws
  /// on driver errors.
  explicit ClockProbe(CUdevice device);
  ~ClockProbe();
  ClockProbe(const ClockProbe&) = delete;
  ClockProbe& operator=(const ClockProbe&) = delete;

  /// Enqueues a kernel that keeps every SM busy for `ms` milliseconds of device time.
  void keep_busy(CUstream stream, double ms);
  /// Enqueues one clock measurement; read() returns it, in order.
  void probe(CUstream stream);
  /// Waits for the stream and returns the SM clock (MHz) of every probe since the last read().
  std::vector<double> read(CUstream stream);
  /// Brings the SM clock to a steady state and returns it (MHz): probes it, and if it is
  /// below `awake_fraction` of the device's rated clock (an idle device), keeps the SMs busy
  /// 1 ms at a time until it reaches `fraction` of the rated clock, or a step raised it by
  /// less than 1% with it at `awake_fraction` or more, for at most `cap_ms` in all. A device
  /// at `awake_fraction` or more is running already, or held there by its power limit after
  /// heavy kernels (busy kernels would only raise it for the tuning's own kernels to pull it
  /// down again): one probe, about 20 us.
  double settle(CUstream stream, double fraction, double awake_fraction, double cap_ms);

 private:
  CUfunction busy_ = nullptr;
  CUfunction clock_ = nullptr;
  int sm_count_ = 1;
  double rated_mhz_ = 0.0;  ///< the device's rated SM clock (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
  std::unique_ptr<DeviceBuffer> slots_;  ///< two 64-bit counters per probe
  std::vector<std::unique_ptr<DeviceBuffer>>* idle_slots_ = nullptr;  ///< where slots_ goes back
  std::size_t used_ = 0;
};

}  // namespace disttune::detail
