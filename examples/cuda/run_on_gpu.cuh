// run_on_gpu: the main() of a CUDA example or benchmark: it needs a device, and an error ends
// it with a message.
#pragma once

#include <cstdio>
#include <exception>

#include "disttune/cuda.hpp"

namespace cuda_example {

/// Runs `body` (returning main's exit status) when a CUDA device is there; else, or when
/// `body` throws, prints why, naming `program`, to stderr and returns 1.
template <class Body>
int run_on_gpu(const char* program, Body&& body) {
  if (auto reason = disttune::cuda_unavailable_reason()) {
    std::fprintf(stderr, "%s needs a CUDA device: %s\n", program, reason->c_str());
    return 1;
  }
  try {
    return body();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s failed: %s\n", program, error.what());
    return 1;
  }
}

}  // namespace cuda_example
