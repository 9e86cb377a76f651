// The spec's `scale` example across GPUs: one process and one GPU per rank, started by
// mpirun; NCCL carries the engine's collectives (timings reduced with MAX on the device),
// MPI only hands out NCCL's unique id. Run: mpirun -np <GPUs> scale_nccl [floats per rank]
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "disttune/autotune.hpp"
#include "disttune/cuda.hpp"
#include "disttune/mpi.hpp"
#include "disttune/nccl.hpp"
#include "nccl_world.hpp"
#include "scale_kernel.cuh"

namespace {

using scale_example::check_cuda;
using scale_example::config_space;
using scale_example::ScaleConfig;

using Scale = disttune::Autotuned<ScaleConfig, std::tuple<int, std::string>,
                                  void(const float*, float*, float, int)>;

Scale make_scale(cudaStream_t stream, std::shared_ptr<disttune::Communicator> ranks) {
  Scale::Spec spec;
  spec.identity = DISTTUNE_FUNCTION("scale_nccl");
  spec.configs = config_space();
  spec.key = [](const float* const&, float* const&, const float&, const int& n) {
    return std::make_tuple(n, std::string("float32"));
  };
  spec.prune = [](const ScaleConfig& c, const float* const&, float* const&, const float&,
                  const int&) { return c.block * sizeof(float) < 32 * 1024; };
  spec.launch = [stream](const ScaleConfig& c, const float* x, float* y, float alpha, int n) {
    scale_launch(c, x, y, alpha, n, stream);
  };
  spec.options.timer = std::make_shared<disttune::CudaTimer>(disttune::CudaTimerOptions{.stream = stream});
  spec.options.communicator = std::move(ranks);
  return Scale(std::move(spec));
}

void expect_scaled(const std::vector<float>& x, const float* device_y, float alpha) {
  std::vector<float> y(x.size());
  check_cuda(cudaMemcpy(y.data(), device_y, y.size() * sizeof(float), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = alpha * x[i];
    if (!(std::fabs(y[i] - want) <= 1e-5f + 1e-4f * std::fabs(want))) {
      throw std::runtime_error("scale: wrong result at " + std::to_string(i));
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

void run(int argc, char** argv) {
  const nccl_world::MpiRank me = nccl_world::MpiRank::on_its_gpu();
  const int rank = me.rank, size = me.size;
  nccl_world::NcclComm nccl(me);
  nccl_world::Stream owned_stream;
  cudaStream_t stream = owned_stream.get();
  {
    // The roll call over MPI names the ranks missing from a late collective (NCCL cannot).
    std::shared_ptr<disttune::Communicator> ranks = disttune::make_nccl_communicator(
        nccl.get(), stream, std::nullopt, disttune::make_mpi_roll_call(MPI_COMM_WORLD));
    const int n = argc > 1 ? std::stoi(argv[1]) : (1 << 22);
    std::vector<float> x(static_cast<std::size_t>(n));
    std::mt19937 random(1234u + static_cast<unsigned>(rank));
    std::normal_distribution<float> normal;
    for (float& v : x) v = normal(random);
    DeviceFloats device_x = device_floats(x.size());
    DeviceFloats device_y = device_floats(x.size());
    check_cuda(cudaMemcpy(device_x.get(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice),
               "cudaMemcpy");

    Scale scale = make_scale(stream, ranks);
    scale(device_x.get(), device_y.get(), 2.5f, n);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    expect_scaled(x, device_y.get(), 2.5f);
    const auto report = scale.last_report();
    const auto context = disttune::CollectiveContext{
        "example summary", "scale_nccl", "", std::nullopt,
        disttune::deadline_after(disttune::default_collective_timeout())};
    const auto choices = ranks->all_gather(report->candidates[report->best].config, context);
    if (rank == 0) {
      std::printf("scale_nccl: %d ranks (GPUs), local rank of rank 0: %d, %d floats per rank\n", size,
                  ranks->local_rank(), n);
      std::printf("%s", disttune::format_table(*report).c_str());
      for (std::size_t r = 0; r < choices.size(); ++r) std::printf("rank %zu uses %s\n", r, choices[r].c_str());
    }
    scale(device_x.get(), device_y.get(), 3.0f, n);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    expect_scaled(x, device_y.get(), 3.0f);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (auto reason = disttune::cuda_unavailable_reason()) {
    std::fprintf(stderr, "scale_nccl needs a CUDA device: %s\n", reason->c_str());
    MPI_Finalize();
    return 1;
  }
  try {
    run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "scale_nccl failed: %s\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
