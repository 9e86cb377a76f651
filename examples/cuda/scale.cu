// The spec's `scale` example in CUDA C++: y = alpha * x, tuned over BLOCK x warps with
// device-event timing on the launcher's stream.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../common/inputs.hpp"
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
  spec.options.timer = cuda_example::flushing_timer(stream);
  return Scale(std::move(spec));
}

}  // namespace

int main(int argc, char** argv) {
  return cuda_example::run_on_gpu("scale_cuda", [&](cudaStream_t stream) {
    const int n = example::size_argument(argc, argv, 1 << 18);
    const cuda_example::ScaleOperands operands(n, 1234);

    Scale scale = make_scale(stream);
    std::printf("scale: %d floats, %zu configs in the space\n", n, scale.spec().configs.size());
    scale.call({.autotune = true, .verbose = false}, operands.device_x.get(), operands.device_y.get(), 2.5f, n);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    expect_scaled(operands.x, operands.device_y.get(), 2.5f);
    const auto report = scale.last_report();
    std::printf("%s", disttune::format_table(*report).c_str());
    std::printf("chosen config: %s (%s)\n", report->candidates[report->best].config.c_str(),
                disttune::source_name(*report) == "disk" ? "read from the disk cache"
                                                         : "tuned now");

    scale(operands.device_x.get(), operands.device_y.get(), 3.0f, n);  // same key: the in-process cache answers
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    expect_scaled(operands.x, operands.device_y.get(), 3.0f);
    std::printf("second call, same key: cache hit, result checked\n");
    return 0;
  });
}
