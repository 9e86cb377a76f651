// The spec's `scale` on the CPU: its config (block size, threads), config space and launcher,
// shared by the CPU examples (one process and across MPI ranks).
#pragma once

#include <algorithm>
#include <span>
#include <thread>
#include <vector>

#include "disttune/config.hpp"

namespace scale_example {

/// One config: elements per block and worker threads that share the blocks.
struct ScaleConfig {
  int block = 0;
  int threads = 1;
};
inline disttune::Value describe(const ScaleConfig& c) {
  return {{"BLOCK", c.block}, {"threads", c.threads}};
}

/// Like the spec's 4 block sizes x 2 warp counts, here block sizes x threads.
inline std::vector<ScaleConfig> config_space() {
  std::vector<ScaleConfig> space;
  for (int block : {256, 1024, 4096, 16384}) {
    for (int threads : {1, 2}) space.push_back({block, threads});
  }
  return space;
}

/// Scales blocks first, first + stride, ... of x into y.
inline void scale_blocks(std::span<const float> x, std::span<float> y, float alpha, int block,
                         int first, int stride) {
  const auto step = static_cast<std::size_t>(block);
  for (std::size_t start = static_cast<std::size_t>(first) * step; start < x.size();
       start += static_cast<std::size_t>(stride) * step) {
    const std::size_t end = std::min(x.size(), start + step);
    for (std::size_t i = start; i < end; ++i) y[i] = alpha * x[i];
  }
}

/// The launcher: y = alpha * x with the config's blocking and threads.
inline void scale_launch(const ScaleConfig& c, std::span<const float> x, std::span<float> y,
                         float alpha) {
  std::vector<std::jthread> workers;
  for (int t = 1; t < c.threads; ++t) {
    workers.emplace_back([=] { scale_blocks(x, y, alpha, c.block, t, c.threads); });
  }
  scale_blocks(x, y, alpha, c.block, 0, c.threads);
}

/// Like the spec's prune_fn: a block must fit in 32 KiB.
inline bool block_fits(const ScaleConfig& c) { return c.block * sizeof(float) < 32 * 1024; }

}  // namespace scale_example
