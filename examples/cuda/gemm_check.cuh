// Device buffers, random fp16 inputs and the relative-error check against the reference
// GEMM, shared by the GEMM example and benchmark.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "device_resources.cuh"
#include "gemm_kernels.cuh"

namespace gemm {

using cuda_example::check_cuda;
using cuda_example::device_array;
using cuda_example::DeviceArray;

/// A, B (fp16, uniform in [-1, 1), fresh for each seed) and C (fp32) for one shape.
struct Operands {
  Shape shape;
  DeviceArray<half> a;
  DeviceArray<half> b;
  DeviceArray<float> c;

  Operands(const Shape& s, std::uint32_t seed)
      : shape(s),
        a(device_array<half>(static_cast<std::size_t>(s.m) * s.k)),
        b(device_array<half>(static_cast<std::size_t>(s.k) * s.n)),
        c(device_array<float>(static_cast<std::size_t>(s.m) * s.n)) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    auto upload = [&](half* device, std::size_t count) {
      std::vector<half> host(count);
      for (half& v : host) v = __float2half(uniform(random));
      check_cuda(cudaMemcpy(device, host.data(), count * sizeof(half), cudaMemcpyHostToDevice), "cudaMemcpy");
    };
    upload(a.get(), static_cast<std::size_t>(s.m) * s.k);
    upload(b.get(), static_cast<std::size_t>(s.k) * s.n);
  }
  std::size_t c_elements() const { return static_cast<std::size_t>(shape.m) * shape.n; }
  /// Fills C with NaN so an element the kernel does not write fails the check.
  void poison_c(cudaStream_t stream) {
    check_cuda(cudaMemsetAsync(c.get(), 0xFF, c_elements() * sizeof(float), stream), "cudaMemsetAsync");
  }
};

/// ||C - reference|| / ||reference|| (Frobenius), reference computed on the device; NaN if C
/// holds a NaN.
inline double relative_error(Operands& operands, cudaStream_t stream) {
  auto reference = device_array<float>(operands.c_elements());
  reference_gemm(operands.a.get(), operands.b.get(), reference.get(), operands.shape, stream);
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const std::vector<float> got = cuda_example::download(operands.c.get(), operands.c_elements());
  const std::vector<float> want = cuda_example::download(reference.get(), operands.c_elements());
  double difference = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    difference += d * d;
    norm += static_cast<double>(want[i]) * want[i];
  }
  return std::sqrt(difference / norm);
}

}  // namespace gemm
