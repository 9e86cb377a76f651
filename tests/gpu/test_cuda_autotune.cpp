// The C++ autotune API with CudaTimer on a device: a refused launch is a failed config and
// tuning goes on; tuning on a stream under capture is refused before any run.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "disttune/autotune.hpp"
#include "disttune/cuda.hpp"
#include "gpu_kernels.hpp"
#include "gpu_test_support.hpp"

namespace disttune::gpu_test {
namespace {

struct FillConfig {
  int threads = 0;
};
Value describe(const FillConfig& c) { return {{"threads", c.threads}}; }

using Fill = Autotuned<FillConfig, int, void(float*, int)>;

/// Fills out[0, n) with 2 using the config's threads per block; 4096 threads is refused.
Fill make_fill(cudaStream_t stream, const std::string& name) {
  Fill::Spec spec;
  spec.identity = {name, "gpu-test-1"};
  spec.configs = {{128}, {4096}, {256}};
  spec.key = [](float* const&, const int& n) { return n; };
  spec.launch = [stream](const FillConfig& c, float* out, int n) { launch_fill(out, n, 2.0f, c.threads, stream); };
  spec.options.timer = std::make_shared<CudaTimer>(CudaTimerOptions{.stream = stream});
  spec.options.disk_cache = false;
  spec.options.measurement.strategy = "exhaustive";  // 10 samples per candidate, asserted below
  return Fill(std::move(spec));
}

using CudaAutotuneTest = CudaTest;

TEST_F(CudaAutotuneTest, ARefusedLaunchIsAFailedConfigAndTuningContinues) {
  constexpr int kCount = 1 << 20;
  DeviceArray<float> out(kCount);
  check_cuda(cudaMemsetAsync(out.get(), 0, kCount * sizeof(float), stream_), "cudaMemsetAsync");
  Fill fill = make_fill(stream_, "gpu_test_fill");
  fill(out.get(), kCount);
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");

  const auto report = fill.last_report();
  ASSERT_TRUE(report.has_value());
  std::printf("%s", format_table(*report).c_str());
  ASSERT_EQ(report->candidates.size(), 3u);
  EXPECT_TRUE(report->candidates[1].failed);
  // The launcher's own check of cudaGetLastError() threw (CUDA 13 calls 4096 threads per
  // block an "invalid argument"; older runtimes an "invalid configuration argument").
  EXPECT_NE(report->candidates[1].error.find("fill_kernel launch: invalid"), std::string::npos)
      << report->candidates[1].error;
  EXPECT_FALSE(report->candidates[0].failed);
  EXPECT_FALSE(report->candidates[2].failed);
  EXPECT_NE(report->best, 1u);
  EXPECT_EQ(report->candidates[0].samples.size(), 10u);

  std::vector<float> host(kCount);
  check_cuda(cudaMemcpy(host.data(), out.get(), kCount * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(host[i], 2.0f) << "element " << i;
}

TEST_F(CudaAutotuneTest, TuningOnAStreamUnderCaptureIsRefusedBeforeAnyRun) {
  constexpr int kCount = 1024;
  DeviceArray<float> out(kCount);
  Fill fill = make_fill(stream_, "gpu_test_fill_capture");
  check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  const std::string refusal = thrown_text([&] { fill(out.get(), kCount); });
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  std::size_t nodes = 0;
  check_cuda(cudaGraphGetNodes(graph, nullptr, &nodes), "cudaGraphGetNodes");
  cudaGraphDestroy(graph);
  EXPECT_NE(refusal.find("being captured"), std::string::npos) << refusal;
  EXPECT_EQ(nodes, 0u) << "a candidate ran inside the caller's capture";
  EXPECT_FALSE(fill.cached_choice(kCount).has_value());
}

}  // namespace
}  // namespace disttune::gpu_test
