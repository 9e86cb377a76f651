// Device buffers, random fp16 inputs and the relative-error check against the reference
// GEMM, shared by the GEMM example and benchmark.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_kernels.cuh"

namespace gemm {

inline void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(error));
}

struct DeviceFree {
  void operator()(void* pointer) const { cudaFree(pointer); }
};

/// `count` elements of T in device memory, freed on destruction.
template <class T>
std::unique_ptr<T, DeviceFree> device_array(std::size_t count) {
  void* pointer = nullptr;
  check_cuda(cudaMalloc(&pointer, count * sizeof(T)), "cudaMalloc");
  return std::unique_ptr<T, DeviceFree>(static_cast<T*>(pointer));
}

/// A, B (fp16, uniform in [-1, 1), fresh for each seed) and C (fp32) for one shape.
struct Operands {
  Shape shape;
  std::unique_ptr<half, DeviceFree> a;
  std::unique_ptr<half, DeviceFree> b;
  std::unique_ptr<float, DeviceFree> c;

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
  std::vector<float> got(operands.c_elements());
  std::vector<float> want(operands.c_elements());
  check_cuda(cudaMemcpy(got.data(), operands.c.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check_cuda(cudaMemcpy(want.data(), reference.get(), want.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
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
