// A tiled fp16/fp32 tensor-core GEMM tuned over 18 tilings with the C++ API, checked
// against a reference.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <tuple>

#include "../common/inputs.hpp"
#include "disttune/autotune.hpp"
#include "disttune/cuda.hpp"
#include "gemm_check.cuh"
#include "gemm_kernels.cuh"
#include "run_on_gpu.cuh"

namespace {

using Gemm = disttune::Autotuned<gemm::GemmConfig, std::tuple<int, int, int>,
                                 void(const half*, const half*, float*, gemm::Shape)>;

Gemm make_gemm(cudaStream_t stream) {
  Gemm::Spec spec;
  spec.identity = DISTTUNE_FUNCTION("gemm_fp16_fp32");
  spec.configs = gemm::config_space();
  spec.key = [](const half* const&, const half* const&, float* const&, const gemm::Shape& s) {
    return std::make_tuple(s.m, s.n, s.k);
  };
  // Keep only tilings that divide the shape: the kernel has no edge handling.
  spec.prune = [](const gemm::GemmConfig& c, const half* const&, const half* const&, float* const&,
                  const gemm::Shape& s) { return gemm::fits(c, s); };
  spec.launch = [stream](const gemm::GemmConfig& c, const half* a, const half* b, float* out,
                         gemm::Shape s) { gemm::gemm(c, a, b, out, s, stream); };
  spec.options.timer = cuda_example::flushing_timer(stream);
  return Gemm(std::move(spec));
}

}  // namespace

int main(int argc, char** argv) {
  return cuda_example::run_on_gpu("gemm_cuda", [&](cudaStream_t stream) {
    const int size = example::size_argument(argc, argv, 4096);
    const gemm::Shape shape{size, size, size};
    gemm::Operands operands(shape, 2026);
    Gemm tuned = make_gemm(stream);
    std::printf("gemm: %dx%dx%d fp16 in, fp32 accumulate, %zu configs in the space\n", shape.m,
                shape.n, shape.k, tuned.spec().configs.size());

    operands.poison_c(stream);
    tuned(operands.a.get(), operands.b.get(), operands.c.get(), shape);
    const double error = gemm::relative_error(operands, stream);
    const auto report = tuned.last_report();
    std::printf("%s", disttune::format_table(*report).c_str());
    const auto& best = report->candidates[report->best];
    const double flops = 2.0 * shape.m * shape.n * static_cast<double>(shape.k);
    std::printf("chosen config: %s, %.3f ms, %.1f TFLOP/s (%s)\n", best.config.c_str(),
                best.agreed_ms, flops / (best.agreed_ms * 1e-3) / 1e12,
                disttune::source_name(*report) == "disk" ? "read from the disk cache"
                                                         : "tuned now");
    std::printf("relative error vs reference: %.2e\n", error);
    if (!(error < 1e-4)) throw std::runtime_error("gemm: result differs from the reference");

    gemm::Operands fresh(shape, 7);  // same key, new data: the cached choice must be right too
    fresh.poison_c(stream);
    tuned(fresh.a.get(), fresh.b.get(), fresh.c.get(), shape);
    const double fresh_error = gemm::relative_error(fresh, stream);
    std::printf("second call (cache hit, fresh inputs): relative error %.2e\n", fresh_error);
    if (!(fresh_error < 1e-4)) throw std::runtime_error("gemm: cached config gives a wrong result");
    return 0;
  });
}
