// The spec's `scale` in CUDA C++: its config (BLOCK x warps), config space, kernel and
// launcher, shared by the CUDA examples (one GPU, and one GPU per rank with NCCL).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "disttune/config.hpp"

namespace scale_example {

inline void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(error));
}

/// One config, like the spec's triton.Config({"BLOCK": block}, num_warps=warps).
struct ScaleConfig {
  int block = 0;
  int warps = 0;
};
inline disttune::Value describe(const ScaleConfig& c) { return {{"BLOCK", c.block}, {"num_warps", c.warps}}; }

/// The spec's config space: BLOCK in (256, 512, 1024, 2048) x num_warps in (4, 8).
inline std::vector<ScaleConfig> config_space() {
  std::vector<ScaleConfig> space;
  for (int block : {256, 512, 1024, 2048}) {
    for (int warps : {4, 8}) space.push_back({block, warps});
  }
  return space;
}

/// Each thread block handles kBlock consecutive elements (the spec's program of BLOCK).
template <int kBlock>
__global__ void scale_kernel(const float* x, float* y, float alpha, int n) {
  const long long base = static_cast<long long>(blockIdx.x) * kBlock;
  for (int i = threadIdx.x; i < kBlock; i += blockDim.x) {
    const long long offset = base + i;
    if (offset < n) y[offset] = alpha * x[offset];
  }
}

template <int kBlock>
void launch_block(int warps, const float* x, float* y, float alpha, int n, cudaStream_t stream) {
  const int grid = (n + kBlock - 1) / kBlock;
  scale_kernel<kBlock><<<grid, warps * 32, 0, stream>>>(x, y, alpha, n);
}

/// The launcher: enqueues y = alpha * x on `stream` with the config's BLOCK and warps.
inline void scale_launch(const ScaleConfig& c, const float* x, float* y, float alpha, int n,
                  cudaStream_t stream) {
  switch (c.block) {
    case 256: launch_block<256>(c.warps, x, y, alpha, n, stream); break;
    case 512: launch_block<512>(c.warps, x, y, alpha, n, stream); break;
    case 1024: launch_block<1024>(c.warps, x, y, alpha, n, stream); break;
    case 2048: launch_block<2048>(c.warps, x, y, alpha, n, stream); break;
    default: throw std::invalid_argument("scale: no kernel for BLOCK=" + std::to_string(c.block));
  }
  check_cuda(cudaGetLastError(), "scale_kernel launch");
}

}  // namespace scale_example
