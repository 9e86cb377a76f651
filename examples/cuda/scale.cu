// The spec's `scale` example in CUDA C++: y = alpha * x, tuned over BLOCK x warps with
// device-event timing on the launcher's stream.
#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "disttune/autotune.hpp"
#include "disttune/cuda.hpp"
#include "run_on_gpu.cuh"
#include "scale_kernel.cuh"

namespace {

using cuda_example::check_cuda;
using scale_example::expect_scaled;
using scale_example::Scale;

Scale make_scale(cudaStream_t stream) {
  Scale::Spec spec = scale_example::scale_spec(stream);
  spec.identity = DISTTUNE_FUNCTION("scale");
  spec.options.timer = std::make_shared<disttune::CudaTimer>(
      disttune::CudaTimerOptions{.stream = stream, .flush_l2 = true});
  return Scale(std::move(spec));
}

}  // namespace

int main(int argc, char** argv) {
  return cuda_example::run_on_gpu("scale_cuda", [&] {
    const int n = argc > 1 ? std::stoi(argv[1]) : (1 << 18);
    const std::vector<float> x = cuda_example::normal_floats(static_cast<std::size_t>(n), 1234);
    const auto device_x = cuda_example::upload(x);
    const auto device_y = cuda_example::device_array<float>(x.size());
    const cuda_example::Stream owned_stream;
    const cudaStream_t stream = owned_stream.get();

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
    return 0;
  });
}
