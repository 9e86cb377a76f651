// The spec's contextual method in CUDA C++: an outer function with two tunable kernels that
// share device buffers (y = alpha * x, then sum(y * y)), tuned inside its real calls with
// device events on the outer function's stream. One reduce config cannot launch (too many
// threads per block): it is recorded failed and the outer run is restarted without it.
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/expect_near.hpp"
#include "../common/inputs.hpp"
#include "../common/print_choice.hpp"
#include "device_resources.cuh"
#include "disttune/context.hpp"
#include "disttune/cuda.hpp"
#include "run_on_gpu.cuh"

namespace {

using cuda_example::check_cuda;

/// A launch shape: threads per block and elements per thread.
struct Shape {
  int threads = 0;
  int items = 0;
};
disttune::Value describe(const Shape& s) { return {{"threads", s.threads}, {"items", s.items}}; }

std::vector<Shape> shapes(std::initializer_list<int> threads, std::initializer_list<int> items) {
  std::vector<Shape> space;
  for (int t : threads) {
    for (int i : items) space.push_back({t, i});
  }
  return space;
}

int blocks_for(const Shape& s, int n) {
  const long long per_block = static_cast<long long>(s.threads) * s.items;
  return static_cast<int>((n + per_block - 1) / per_block);
}

/// Each block covers threads * items consecutive elements, each thread every threads-th one.
__global__ void scale_kernel(const float* x, float* y, float alpha, int n, int items) {
  const long long base = static_cast<long long>(blockIdx.x) * blockDim.x * items + threadIdx.x;
  for (int k = 0; k < items; ++k) {
    const long long i = base + static_cast<long long>(k) * blockDim.x;
    if (i < n) y[i] = alpha * x[i];
  }
}

/// Adds sum(y * y) over the block's elements to *sum: one atomic per warp.
__global__ void sum_squares_kernel(const float* y, float* sum, int n, int items) {
  const long long base = static_cast<long long>(blockIdx.x) * blockDim.x * items + threadIdx.x;
  float local = 0.0f;
  for (int k = 0; k < items; ++k) {
    const long long i = base + static_cast<long long>(k) * blockDim.x;
    if (i < n) local += y[i] * y[i];
  }
  for (int offset = 16; offset > 0; offset /= 2) local += __shfl_down_sync(0xffffffffu, local, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, local);
}

using Scale = disttune::TunableKernel<Shape, int, void(const float*, float*, float, int)>;
using SumSquares = disttune::TunableKernel<Shape, int, void(const float*, float*, int)>;

Scale make_scale(cudaStream_t stream) {
  Scale::Spec spec;
  spec.name = "scale";
  spec.configs = shapes({128, 256, 512}, {1, 4});
  spec.key = [](const float* const&, float* const&, const float&, const int& n) { return n; };
  spec.launch = [stream](const Shape& s, const float* x, float* y, float alpha, int n) {
    scale_kernel<<<blocks_for(s, n), s.threads, 0, stream>>>(x, y, alpha, n, s.items);
    check_cuda(cudaGetLastError(), "scale_kernel launch");
  };
  return Scale(std::move(spec));
}

SumSquares make_sum_squares(cudaStream_t stream) {
  SumSquares::Spec spec;
  spec.name = "sum_squares";
  // 2048 threads per block exceed every device's limit: those launches fail.
  spec.configs = shapes({256, 1024, 2048}, {2, 8});
  spec.key = [](const float* const&, float* const&, const int& n) { return n; };
  spec.launch = [stream](const Shape& s, const float* y, float* sum, int n) {
    sum_squares_kernel<<<blocks_for(s, n), s.threads, 0, stream>>>(y, sum, n, s.items);
    check_cuda(cudaGetLastError(), "sum_squares_kernel launch");
  };
  return SumSquares(std::move(spec));
}

}  // namespace

int main(int argc, char** argv) {
  return cuda_example::run_on_gpu("contextual_cuda", [&](cudaStream_t stream) {
    const int n = example::size_argument(argc, argv, 1 << 24);
    const cuda_example::ScaleOperands operands(n, 1234);
    const auto device_sum = cuda_example::device_array<float>(1);

    Scale scale = make_scale(stream);
    SumSquares sum_squares = make_sum_squares(stream);
    disttune::ContextOptions options;  // is_dist=false, n_warmup=3, n_repeat=5
    options.timer = cuda_example::flushing_timer(stream);
    // The outer function: zero the sum, scale, reduce the shared buffer, read the result.
    auto scaled_sum_squares = disttune::make_contextual(
        "scaled_sum_squares",
        [&](float alpha) {
          check_cuda(cudaMemsetAsync(device_sum.get(), 0, sizeof(float), stream), "cudaMemsetAsync");
          scale(operands.device_x.get(), operands.device_y.get(), alpha, n);
          sum_squares(operands.device_y.get(), device_sum.get(), n);
          float sum = 0.0f;
          check_cuda(cudaMemcpyAsync(&sum, device_sum.get(), sizeof(float), cudaMemcpyDeviceToHost, stream),
                     "cudaMemcpyAsync");
          check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
          return sum;
        },
        options);

    const float alpha = 2.5f;
    const float sum = scaled_sum_squares(alpha);
    double reference = 0.0;
    for (float v : operands.x) reference += double(alpha * v) * double(alpha * v);
    example::expect_near(sum, reference, 1e-3, "sum");
    std::printf("scaled_sum_squares: %d floats, %d outer runs, result checked (%.1f)\n", n,
                scaled_sum_squares.tuner().outer_runs(), sum);
    example::print_choice(scale);
    example::print_choice(sum_squares);
    const disttune::KernelChoice reduce_tuning = *sum_squares.last_tuning();
    if (!reduce_tuning.candidates[4].failed || !reduce_tuning.candidates[5].failed) {
      throw std::runtime_error("the 2048-thread reduce configs should have failed to launch");
    }

    const float again = scaled_sum_squares(alpha);  // same key: cached choices, one run
    if (scaled_sum_squares.tuner().outer_runs() != 1) {
      throw std::runtime_error("expected one outer run with cached choices");
    }
    example::expect_near(again, reference, 1e-3, "sum on the second call");
    std::printf("second call: %d outer run (cached choices)\nlog: %s\n",
                scaled_sum_squares.tuner().outer_runs(), scaled_sum_squares.tuner().log_path().c_str());
    return 0;
  });
}
