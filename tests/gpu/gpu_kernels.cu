// The GPU tests' kernels and their launchers; every launch is checked.
#include <stdexcept>
#include <string>

#include "gpu_kernels.hpp"

namespace disttune::gpu_test {
namespace {

__device__ unsigned long long global_timer_ns() {
  unsigned long long ns = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__global__ void spin_kernel(long long cycles, unsigned long long* elapsed_ns) {
  const unsigned long long begin_ns = global_timer_ns();
  const long long begin = clock64();
  while (clock64() - begin < cycles) {
  }
  *elapsed_ns = global_timer_ns() - begin_ns;
}

__global__ void read_kernel(const float4* buffer, std::size_t count4, float* sum) {
  float local = 0.0f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count4;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 v = buffer[i];
    local += v.x + v.y + v.z + v.w;
  }
  if (local == 12345.678f) *sum = local;  // keeps the loads; never true for the tests' data
}

__global__ void tiny_kernel(float* out) {
  if (threadIdx.x == 0) *out += 1.0f;
}

__global__ void fill_kernel(float* out, int count, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = value;
}

void check_launch(const char* kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(kernel) + " launch: " + cudaGetErrorString(error));
  }
}

}  // namespace

void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(error));
}

void launch_spin(long long cycles, unsigned long long* elapsed_ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(cycles, elapsed_ns);
  check_launch("spin_kernel");
}

void launch_read(const float* buffer, std::size_t count, float* sum, cudaStream_t stream) {
  int device = 0;
  int sms = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  read_kernel<<<sms * 4, 512, 0, stream>>>(reinterpret_cast<const float4*>(buffer), count / 4, sum);
  check_launch("read_kernel");
}

void launch_tiny(float* out, cudaStream_t stream) {
  tiny_kernel<<<1, 32, 0, stream>>>(out);
  check_launch("tiny_kernel");
}

void launch_fill(float* out, int count, float value, int threads, cudaStream_t stream) {
  fill_kernel<<<(count + threads - 1) / threads, threads, 0, stream>>>(out, count, value);
  check_launch("fill_kernel");
}

}  // namespace disttune::gpu_test
