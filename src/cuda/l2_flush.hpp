// The per-device buffer whose clearing evicts the L2 cache before a timed run.
#pragma once

#include "cuda_driver/driver_resources.hpp"

namespace disttune::detail {

/// `device`'s flush buffer: twice its L2 size, allocated once per process in the device's
/// primary context on first use, freed at exit. Thread-safe.
const DeviceBuffer& l2_flush_buffer(CUdevice device);

}  // namespace disttune::detail
