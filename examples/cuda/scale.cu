// The spec's `scale` example in CUDA C++: y = alpha * x, tuned over BLOCK x warps with
// device-event timing on the launcher's stream.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "disttune/autotune.hpp"
#include "disttune/cuda.hpp"
#include "scale_kernel.cuh"

namespace {

using scale_example::check_cuda;
using scale_example::config_space;
using scale_example::ScaleConfig;

using Scale = disttune::Autotuned<ScaleConfig, std::tuple<int, std::string>,
                                  void(const float*, float*, float, int)>;

Scale make_scale(cudaStream_t stream) {
  Scale::Spec spec;
  spec.identity = DISTTUNE_FUNCTION("scale");
  spec.configs = config_space();
  // The key: the input's layout; alpha does not change which config is best.
  spec.key = [](const float* const&, float* const&, const float&, const int& n) {
    return std::make_tuple(n, std::string("float32"));
  };
  // The spec's prune_fn: BLOCK * element size < 32 KiB.
  spec.prune = [](const ScaleConfig& c, const float* const&, float* const&, const float&,
                  const int&) { return c.block * sizeof(float) < 32 * 1024; };
  spec.launch = [stream](const ScaleConfig& c, const float* x, float* y, float alpha, int n) {
    scale_launch(c, x, y, alpha, n, stream);
  };
  spec.options.timer = std::make_shared<disttune::CudaTimer>(
      disttune::CudaTimerOptions{.stream = stream, .flush_l2 = true});
  return Scale(std::move(spec));
}

/// Like torch.testing.assert_close(y, alpha * x, atol=1e-5, rtol=1e-4).
void expect_scaled(const std::vector<float>& x, const float* device_y, float alpha) {
  std::vector<float> y(x.size());
  check_cuda(cudaMemcpy(y.data(), device_y, y.size() * sizeof(float), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = alpha * x[i];
    if (!(std::fabs(y[i] - want) <= 1e-5f + 1e-4f * std::fabs(want))) {
      throw std::runtime_error("scale: wrong result at " + std::to_string(i) + ": " +
                               std::to_string(y[i]) + " != " + std::to_string(want));
    }
  }
}

struct DeviceFree {
  void operator()(float* pointer) const { cudaFree(pointer); }
};
using DeviceFloats = std::unique_ptr<float, DeviceFree>;

DeviceFloats device_floats(std::size_t count) {
  float* pointer = nullptr;
  check_cuda(cudaMalloc(&pointer, count * sizeof(float)), "cudaMalloc");
  return DeviceFloats(pointer);
}

}  // namespace

int main(int argc, char** argv) {
  if (auto reason = disttune::cuda_unavailable_reason()) {
    std::fprintf(stderr, "scale_cuda needs a CUDA device: %s\n", reason->c_str());
    return 1;
  }
  try {
    const int n = argc > 1 ? std::stoi(argv[1]) : (1 << 18);
    std::vector<float> x(static_cast<std::size_t>(n));
    std::mt19937 random(1234);
    std::normal_distribution<float> normal;
    for (float& v : x) v = normal(random);
    DeviceFloats device_x = device_floats(x.size());
    DeviceFloats device_y = device_floats(x.size());
    check_cuda(cudaMemcpy(device_x.get(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice),
               "cudaMemcpy");
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

    Scale scale = make_scale(stream);
    std::printf("scale: %d floats, %zu configs in the space\n", n, scale.spec().configs.size());
    scale.call({.autotune = true, .verbose = false}, device_x.get(), device_y.get(), 2.5f, n);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    expect_scaled(x, device_y.get(), 2.5f);
    const auto report = scale.last_report();
    std::printf("%s", disttune::format_table(*report).c_str());
    std::printf("chosen config: %s (%s)\n", report->candidates[report->best].config.c_str(),
                disttune::source_name(*report) == "disk" ? "read from the disk cache"
                                                         : "tuned now");

    scale(device_x.get(), device_y.get(), 3.0f, n);  // same key: the in-process cache answers
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    expect_scaled(x, device_y.get(), 3.0f);
    std::printf("second call, same key: cache hit, result checked\n");
    check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "scale_cuda failed: %s\n", error.what());
    return 1;
  }
}
