// The spec's `scale` example across GPUs: one process and one GPU per rank, started by
// mpirun; NCCL carries the engine's collectives (timings reduced with MAX on the device),
// MPI only hands out NCCL's unique id. Run: mpirun -np <GPUs> scale_nccl [floats per rank]
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../common/inputs.hpp"
#include "disttune/autotune.hpp"
#include "disttune/cuda.hpp"
#include "disttune/mpi.hpp"
#include "disttune/nccl.hpp"
#include "nccl_world.hpp"
#include "scale_kernel.cuh"

namespace {

using cuda_example::check_cuda;
using scale_example::expect_scaled;
using scale_example::Scale;

Scale make_scale(cudaStream_t stream, std::shared_ptr<disttune::Communicator> ranks) {
  Scale::Spec spec = scale_example::scale_spec(stream);
  spec.identity = DISTTUNE_FUNCTION("scale_nccl");
  spec.options.timer = std::make_shared<disttune::CudaTimer>(disttune::CudaTimerOptions{.stream = stream});
  spec.options.communicator = std::move(ranks);
  return Scale(std::move(spec));
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
    const int n = example::size_argument(argc, argv, 1 << 22);
    const cuda_example::ScaleOperands operands(n, 1234u + static_cast<unsigned>(rank));

    Scale scale = make_scale(stream, ranks);
    scale(operands.device_x.get(), operands.device_y.get(), 2.5f, n);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    expect_scaled(operands.x, operands.device_y.get(), 2.5f);
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
    scale(operands.device_x.get(), operands.device_y.get(), 3.0f, n);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    expect_scaled(operands.x, operands.device_y.get(), 3.0f);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return nccl_world::run_on_ranks(argc, argv, "scale_nccl", [&] { run(argc, argv); });
}
