// What the fingerprint says about CUDA: the device and the driver/runtime versions.
#pragma once

#include "cuda_driver/cuda_types.hpp"
#include "disttune/config.hpp"

namespace disttune::detail {

/// {"device", "device_count", "compute_capability", "sm_count", "memory_bytes", "l2_bytes"}
/// of `device`, plus "nvlink_full_mesh" when there are several devices and NVML
/// (libnvidia-ml.so.1) answers.
Value cuda_device_facts(CUdevice device);

/// {"cuda_driver": "13.0"} plus "cuda_runtime" when the process has libcudart loaded.
Value cuda_versions();

}  // namespace disttune::detail
