// The spec's `scale` in CUDA C++: its config (BLOCK x warps), config space, kernel, launcher,
// tuned-function spec and result check, shared by the CUDA examples (one GPU, and one GPU per
// rank with NCCL).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "device_resources.cuh"
#include "disttune/autotune.hpp"

namespace scale_example {

using cuda_example::check_cuda;

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

/// The spec's `scale` as a tuned function: y = alpha * x on the device, keyed by n.
using Scale = disttune::Autotuned<ScaleConfig, std::tuple<int, std::string>, void(const float*, float*, float, int)>;

/// Its spec on `stream`: the config space, the key (the input's layout; alpha does not change
/// which config is best), the spec's prune_fn (BLOCK * element size < 32 KiB) and the
/// launcher. The caller names it and sets its options.
inline Scale::Spec scale_spec(cudaStream_t stream) {
  Scale::Spec spec;
  spec.configs = config_space();
  spec.key = [](const float* const&, float* const&, const float&, const int& n) {
    return std::make_tuple(n, std::string("float32"));
  };
  spec.prune = [](const ScaleConfig& c, const float* const&, float* const&, const float&, const int&) {
    return c.block * sizeof(float) < 32 * 1024;
  };
  spec.launch = [stream](const ScaleConfig& c, const float* x, float* y, float alpha, int n) {
    scale_launch(c, x, y, alpha, n, stream);
  };
  return spec;
}

/// Like torch.testing.assert_close(y, alpha * x, atol=1e-5, rtol=1e-4) for the `x.size()`
/// floats at `device_y`; throws std::runtime_error naming the first element that differs.
inline void expect_scaled(const std::vector<float>& x, const float* device_y, float alpha) {
  const std::vector<float> y = cuda_example::download(device_y, x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = alpha * x[i];
    if (!(std::fabs(y[i] - want) <= 1e-5f + 1e-4f * std::fabs(want))) {
      throw std::runtime_error("scale: wrong result at " + std::to_string(i) + ": " + std::to_string(y[i]) +
                               " != " + std::to_string(want));
    }
  }
}

}  // namespace scale_example
