// Device resources for the CUDA examples: CUDA error checks, arrays and streams freed on
// destruction, copies to and from the host, and the scale examples' operands.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/inputs.hpp"

namespace cuda_example {

/// Throws std::runtime_error naming `call` and the CUDA error unless `error` is cudaSuccess.
inline void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(error));
}

struct DeviceFree {
  void operator()(void* pointer) const { cudaFree(pointer); }
};
template <class T>
using DeviceArray = std::unique_ptr<T, DeviceFree>;

/// `count` elements of T in device memory, freed on destruction.
template <class T>
DeviceArray<T> device_array(std::size_t count) {
  void* pointer = nullptr;
  check_cuda(cudaMalloc(&pointer, count * sizeof(T)), "cudaMalloc");
  return DeviceArray<T>(static_cast<T*>(pointer));
}

/// A non-blocking CUDA stream of the current device, destroyed at the end.
class Stream {
 public:
  Stream() { check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(stream_); }

  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// A device copy of `host`.
template <class T>
DeviceArray<T> upload(const std::vector<T>& host) {
  DeviceArray<T> device = device_array<T>(host.size());
  check_cuda(cudaMemcpy(device.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return device;
}

/// The operands of y = alpha * x in the scale examples: `x`, floats drawn from the standard
/// normal distribution, on the host and copied to the device, and `y` on the device.
struct ScaleOperands {
  ScaleOperands(int n, unsigned seed)
      : x(example::normal_floats(static_cast<std::size_t>(n), seed)),
        device_x(upload(x)),
        device_y(device_array<float>(x.size())) {}

  std::vector<float> x;
  DeviceArray<float> device_x;
  DeviceArray<float> device_y;
};

/// The `count` elements of T at `device`, copied to the host.
template <class T>
std::vector<T> download(const T* device, std::size_t count) {
  std::vector<T> host(count);
  check_cuda(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return host;
}

}  // namespace cuda_example
