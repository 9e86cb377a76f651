// What the GPU tests share: a fixture that skips without a device and owns a stream, and
// small helpers (median, "throws with this text").
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "disttune/cuda.hpp"
#include "gpu_kernels.hpp"

namespace disttune::gpu_test {

/// Skips the test, giving the reason, when CUDA cannot be used; otherwise owns a stream.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = cuda_unavailable_reason()) GTEST_SKIP() << "needs a CUDA device: " << *reason;
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  int attribute(cudaDeviceAttr which) const {
    int device = 0;
    int value = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&value, which, device), "cudaDeviceGetAttribute");
    return value;
  }
  /// SM clock cycles in `ms` milliseconds at the device's rated clock.
  long long cycles_for_ms(double ms) const {
    return static_cast<long long>(attribute(cudaDevAttrClockRate) * ms);  // kHz * ms
  }
  cudaStream_t stream_ = nullptr;
};

/// The median of the samples a timer kept (NaN: a run it discarded).
inline double median(std::vector<double> samples) {
  std::erase_if(samples, [](double ms) { return std::isnan(ms); });
  EXPECT_FALSE(samples.empty());
  if (samples.empty()) return 0.0;
  auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  return *middle;
}

/// The text of the exception `action` throws, or "" if it throws none.
inline std::string thrown_text(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

}  // namespace disttune::gpu_test
