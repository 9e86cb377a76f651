// run_on_gpu: the main() of a CUDA example or benchmark: it needs a device, runs on a stream of
// its own and times with device events; an error ends it with a message.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "device_resources.cuh"
#include "disttune/cuda.hpp"

namespace cuda_example {

/// The examples' timer: device events on `stream`, the L2 cache flushed before each run.
inline std::shared_ptr<disttune::CudaTimer> flushing_timer(cudaStream_t stream) {
  return std::make_shared<disttune::CudaTimer>(
      disttune::CudaTimerOptions{.stream = stream, .flush_l2 = true});
}

/// Runs `body(stream)` (returning main's exit status) on a new non-blocking stream when a CUDA
/// device is there; else, or when `body` throws, prints why, naming `program`, to stderr and
/// returns 1.
template <class Body>
int run_on_gpu(const char* program, Body&& body) {
  if (auto reason = disttune::cuda_unavailable_reason()) {
    std::fprintf(stderr, "%s needs a CUDA device: %s\n", program, reason->c_str());
    return 1;
  }
  try {
    const Stream stream;
    return body(stream.get());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s failed: %s\n", program, error.what());
    return 1;
  }
}

}  // namespace cuda_example
