// Host launchers of the small kernels the GPU tests time (spin, L2 read, tiny, fill).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace disttune::gpu_test {

/// Throws std::runtime_error naming `call` unless `error` is cudaSuccess.
void check_cuda(cudaError_t error, const char* call);

/// One thread spins for `cycles` SM clock cycles (clock64()); writes the %globaltimer
/// nanoseconds it spun to *elapsed_ns.
void launch_spin(long long cycles, unsigned long long* elapsed_ns, cudaStream_t stream);

/// Sums `count` floats (16-byte loads, whole-GPU grid) into *sum.
void launch_read(const float* buffer, std::size_t count, float* sum, cudaStream_t stream);

/// A launch that does almost nothing: one block of 32 threads writes one float.
void launch_tiny(float* out, cudaStream_t stream);

/// Writes value into out[0, count) with `threads` threads per block; throws (with the CUDA
/// error string) if the launch is refused, e.g. for more than 1024 threads.
void launch_fill(float* out, int count, float value, int threads, cudaStream_t stream);

}  // namespace disttune::gpu_test

namespace disttune::gpu_test {

/// `count` elements of T in device memory, freed on destruction.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) {
    void* pointer = nullptr;
    check_cuda(cudaMalloc(&pointer, count * sizeof(T)), "cudaMalloc");
    pointer_ = static_cast<T*>(pointer);
  }
  ~DeviceArray() { cudaFree(pointer_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return pointer_; }

 private:
  T* pointer_ = nullptr;
};

}  // namespace disttune::gpu_test
