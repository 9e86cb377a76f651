// A tiled fp16-in / fp32-accumulate GEMM (C = A * B, all row-major) on tensor cores
// (WMMA), with tile sizes, warps and cp.async pipeline depth as template parameters; its
// config space; and a plain reference kernel. Shared by examples/cuda/gemm.cu and
// bench/gpu/gemm_bench.cu.
#pragma once

#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "disttune/config.hpp"

namespace gemm {

/// One GEMM config: a block computes a tile_m x tile_n tile of C, stepping tile_k along K,
/// with warps_m x warps_n warps, and keeps `stages` K-steps of A and B in flight.
struct GemmConfig {
  int tile_m = 0;
  int tile_n = 0;
  int tile_k = 0;
  int warps_m = 0;
  int warps_n = 0;
  int stages = 0;
  int threads() const { return warps_m * warps_n * 32; }
};

inline disttune::Value describe(const GemmConfig& c) {
  return {{"BLOCK_M", c.tile_m}, {"BLOCK_N", c.tile_n}, {"BLOCK_K", c.tile_k},
          {"WARPS_M", c.warps_m}, {"WARPS_N", c.warps_n}, {"STAGES", c.stages}};
}

/// Problem shape; M, N, K.
struct Shape {
  int m = 0;
  int n = 0;
  int k = 0;
};

/// Whether `c`'s tiles divide the shape (the kernel has no edge handling).
inline bool fits(const GemmConfig& c, const Shape& s) {
  return s.m % c.tile_m == 0 && s.n % c.tile_n == 0 && s.k % c.tile_k == 0;
}

namespace detail {

constexpr int kFragment = 16;  // WMMA m16n16k16
constexpr int kPad = 8;        // halves of padding per shared row: 16 bytes, keeps alignment

template <int kTileM, int kTileN, int kTileK, int kStages>
constexpr int shared_bytes() {
  return kStages * (kTileM * (kTileK + kPad) + kTileK * (kTileN + kPad)) * 2;
}

template <int kTileM, int kTileN, int kTileK, int kThreads>
__device__ void load_stage(const half* a, const half* b, half* a_tile, half* b_tile, int k_step,
                           int n, int k) {
  const int row0 = blockIdx.y * kTileM;
  const int col0 = blockIdx.x * kTileN;
  constexpr int kChunk = 8;  // halves per 16-byte copy
  for (int chunk = threadIdx.x; chunk < kTileM * kTileK / kChunk; chunk += kThreads) {
    const int r = chunk / (kTileK / kChunk);
    const int c = chunk % (kTileK / kChunk) * kChunk;
    __pipeline_memcpy_async(a_tile + r * (kTileK + kPad) + c,
                            a + static_cast<long long>(row0 + r) * k + k_step * kTileK + c, 16);
  }
  for (int chunk = threadIdx.x; chunk < kTileK * kTileN / kChunk; chunk += kThreads) {
    const int r = chunk / (kTileN / kChunk);
    const int c = chunk % (kTileN / kChunk) * kChunk;
    __pipeline_memcpy_async(b_tile + r * (kTileN + kPad) + c,
                            b + static_cast<long long>(k_step * kTileK + r) * n + col0 + c, 16);
  }
}

template <int kTileM, int kTileN, int kTileK, int kWarpsM, int kWarpsN, int kStages>
__global__ void __launch_bounds__(kWarpsM* kWarpsN * 32)
    gemm_kernel(const half* __restrict__ a, const half* __restrict__ b, float* __restrict__ c,
                int n, int k) {
  using namespace nvcuda;
  constexpr int kThreads = kWarpsM * kWarpsN * 32;
  constexpr int kWarpTileM = kTileM / kWarpsM;
  constexpr int kWarpTileN = kTileN / kWarpsN;
  constexpr int kFragsM = kWarpTileM / kFragment;
  constexpr int kFragsN = kWarpTileN / kFragment;
  constexpr int kStageA = kTileM * (kTileK + kPad);
  constexpr int kStageB = kTileK * (kTileN + kPad);
  static_assert(kWarpTileM % kFragment == 0 && kWarpTileN % kFragment == 0);
  static_assert(kTileK % kFragment == 0 && kStages >= 2);

  extern __shared__ __align__(128) unsigned char shared[];
  half* a_tiles = reinterpret_cast<half*>(shared);
  half* b_tiles = a_tiles + kStages * kStageA;

  const int warp = threadIdx.x / 32;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;

  wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> acc[kFragsM][kFragsN];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  const int k_steps = k / kTileK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_steps) {
      load_stage<kTileM, kTileN, kTileK, kThreads>(a, b, a_tiles + s * kStageA,
                                                   b_tiles + s * kStageB, s, n, k);
    }
    __pipeline_commit();
  }

  for (int step = 0; step < k_steps; ++step) {
    __pipeline_wait_prior(kStages - 2);
    __syncthreads();  // this step's tiles are in; every warp is done with the stage refilled next
    const int next = step + kStages - 1;
    if (next < k_steps) {
      const int stage = next % kStages;
      load_stage<kTileM, kTileN, kTileK, kThreads>(a, b, a_tiles + stage * kStageA,
                                                   b_tiles + stage * kStageB, next, n, k);
    }
    __pipeline_commit();

    const half* a_tile = a_tiles + (step % kStages) * kStageA;
    const half* b_tile = b_tiles + (step % kStages) * kStageB;
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += kFragment) {
      wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, half, wmma::row_major> a_frag[kFragsM];
      wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, half, wmma::row_major> b_frag[kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
        wmma::load_matrix_sync(a_frag[i],
                               a_tile + (warp_m * kWarpTileM + i * kFragment) * (kTileK + kPad) + kk,
                               kTileK + kPad);
      }
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) {
        wmma::load_matrix_sync(b_frag[j],
                               b_tile + kk * (kTileN + kPad) + warp_n * kWarpTileN + j * kFragment,
                               kTileN + kPad);
      }
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
      }
    }
  }

  const int row0 = blockIdx.y * kTileM + warp_m * kWarpTileM;
  const int col0 = blockIdx.x * kTileN + warp_n * kWarpTileN;
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      wmma::store_matrix_sync(c + static_cast<long long>(row0 + i * kFragment) * n + col0 + j * kFragment,
                              acc[i][j], n, wmma::mem_row_major);
    }
  }
}

template <int kTileM, int kTileN, int kTileK, int kWarpsM, int kWarpsN, int kStages>
void launch(const half* a, const half* b, float* c, const Shape& s, cudaStream_t stream) {
  auto kernel = gemm_kernel<kTileM, kTileN, kTileK, kWarpsM, kWarpsN, kStages>;
  constexpr int kShared = shared_bytes<kTileM, kTileN, kTileK, kStages>();
  static const cudaError_t attribute_set =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared);
  if (attribute_set != cudaSuccess) {
    throw std::runtime_error(std::string("gemm: cudaFuncSetAttribute: ") + cudaGetErrorString(attribute_set));
  }
  const dim3 grid(s.n / kTileN, s.m / kTileM);
  kernel<<<grid, kWarpsM * kWarpsN * 32, kShared, stream>>>(a, b, c, s.n, s.k);
}

}  // namespace detail

/// The config space: 18 tilings (tile sizes, warps, pipeline depth).
#define GEMM_CONFIGS(X)        \
  X(64, 64, 32, 2, 2, 2)       \
  X(64, 64, 32, 2, 2, 3)       \
  X(64, 64, 32, 2, 2, 4)       \
  X(64, 64, 64, 2, 2, 3)       \
  X(128, 64, 32, 2, 2, 3)      \
  X(128, 64, 32, 4, 2, 3)      \
  X(64, 128, 32, 2, 2, 3)      \
  X(64, 128, 32, 2, 4, 3)      \
  X(128, 128, 32, 2, 2, 2)     \
  X(128, 128, 32, 2, 2, 3)     \
  X(128, 128, 32, 2, 2, 4)     \
  X(128, 128, 32, 4, 2, 3)     \
  X(128, 128, 32, 4, 2, 4)     \
  X(128, 128, 32, 2, 4, 3)     \
  X(128, 128, 64, 2, 2, 3)     \
  X(128, 128, 64, 4, 2, 3)     \
  X(256, 128, 32, 4, 2, 3)     \
  X(128, 256, 32, 2, 4, 3)

inline std::vector<GemmConfig> config_space() {
  std::vector<GemmConfig> space;
#define GEMM_CONFIG_ENTRY(m, n, k, wm, wn, s) space.push_back({m, n, k, wm, wn, s});
  GEMM_CONFIGS(GEMM_CONFIG_ENTRY)
#undef GEMM_CONFIG_ENTRY
  return space;
}

/// Enqueues C = A * B with config `c` on `stream`; throws if `c` is not in the space or the
/// launch fails (cudaGetLastError).
inline void gemm(const GemmConfig& c, const half* a, const half* b, float* out, const Shape& s,
                 cudaStream_t stream) {
  if (!fits(c, s)) throw std::invalid_argument("gemm: tiles do not divide the shape");
  bool launched = false;
#define GEMM_DISPATCH(m, n, k, wm, wn, st)                                                     \
  if (!launched && c.tile_m == m && c.tile_n == n && c.tile_k == k && c.warps_m == wm &&       \
      c.warps_n == wn && c.stages == st) {                                                     \
    detail::launch<m, n, k, wm, wn, st>(a, b, out, s, stream);                                 \
    launched = true;                                                                           \
  }
  GEMM_CONFIGS(GEMM_DISPATCH)
#undef GEMM_DISPATCH
  if (!launched) throw std::invalid_argument("gemm: no kernel for " + disttune::canonical_json(describe(c)));
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) throw std::runtime_error(std::string("gemm launch: ") + cudaGetErrorString(error));
}

/// Reference: one thread per element of C, fp32 accumulation over fp16 inputs.
__global__ void reference_kernel(const half* a, const half* b, float* c, int m, int n, int k) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) {
    sum += __half2float(a[static_cast<long long>(row) * k + i]) * __half2float(b[static_cast<long long>(i) * n + col]);
  }
  c[static_cast<long long>(row) * n + col] = sum;
}

inline void reference_gemm(const half* a, const half* b, float* c, const Shape& s, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid((s.n + 15) / 16, (s.m + 15) / 16);
  reference_kernel<<<grid, block, 0, stream>>>(a, b, c, s.m, s.n, s.k);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) throw std::runtime_error(std::string("reference launch: ") + cudaGetErrorString(error));
}

}  // namespace gemm
