// All-gather + GEMM across GPUs in CUDA C++: C = all_gather(A shards) * B, one process and
// one GPU per rank (mpirun), the shard gathered chunk by chunk with ncclAllGather on one or
// two communication streams while the tensor-core GEMM of examples/cuda/gemm_kernels.cuh
// consumes the chunks already there. Tuned over tile x chunks x streams with the engine's
// collectives on disttune::nccl (MAX over the ranks); the result is checked against a plain
// all-gather and a reference GEMM. Run: mpirun -np <GPUs> allgather_gemm_nccl
#include <cuda_fp16.h>
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
#include "device_resources.cuh"
#include "gemm_kernels.cuh"
#include "nccl_world.hpp"

namespace {

using cuda_example::device_array;
using cuda_example::DeviceArray;
using cuda_example::download;
using cuda_example::upload;
using nccl_world::check_cuda;
using nccl_world::check_nccl;
using nccl_world::MpiRank;
using nccl_world::NcclComm;
using nccl_world::Stream;

/// One config: the GEMM tiling, the number of chunks the shard is gathered in (1: no
/// overlap) and the number of communication streams (each with its own communicator).
struct AgGemmConfig {
  gemm::GemmConfig tile;
  int chunks = 1;
  int streams = 1;
};

disttune::Value describe(const AgGemmConfig& c) {
  return {{"tile", gemm::describe(c.tile)}, {"chunks", c.chunks}, {"streams", c.streams}};
}

std::vector<AgGemmConfig> config_space() {
  const std::vector<gemm::GemmConfig> tiles = {
      {128, 128, 32, 2, 2, 3}, {128, 128, 64, 4, 2, 3}, {64, 128, 32, 2, 4, 3}, {128, 256, 32, 2, 4, 3}};
  std::vector<AgGemmConfig> space;
  for (const auto& tile : tiles) {
    for (int chunks : {1, 2, 4, 8}) {
      for (int streams : {1, 2}) space.push_back({tile, chunks, streams});
    }
  }
  return space;
}

struct Event {
  cudaEvent_t event = nullptr;
  Event() { check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate"); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(event); }
};

/// The operator's streams, communicators and staging buffer for one shape.
class AllGatherGemm {
 public:
  AllGatherGemm(const MpiRank& me, int shard_rows, int k, int n, cudaStream_t compute)
      : size_(me.size), shard_rows_(shard_rows), k_(k), n_(n), compute_(compute),
        staging_(device_array<half>(static_cast<std::size_t>(me.size) * shard_rows * k)) {
    for (int s = 0; s < 2; ++s) comms_.push_back(std::make_unique<NcclComm>(me));
  }

  /// Enqueues C = all_gather(a_shard) * b on the compute stream (the gathers on the
  /// communication streams join it chunk by chunk).
  void run(const AgGemmConfig& c, const half* a_shard, const half* b, float* out) {
    if (shard_rows_ % c.chunks != 0 || c.streams < 1 || c.streams > 2) {
      throw std::invalid_argument("allgather_gemm: config " + disttune::canonical_json(describe(c)) +
                                  " does not fit shard rows " + std::to_string(shard_rows_));
    }
    const int rows = shard_rows_ / c.chunks;
    const gemm::Shape block{rows, n_, k_};
    if (!gemm::fits(c.tile, block)) throw std::invalid_argument("allgather_gemm: tile does not divide the chunk");
    check_cuda(cudaEventRecord(begin_.event, compute_), "cudaEventRecord");
    for (int s = 0; s < c.streams; ++s) {
      check_cuda(cudaStreamWaitEvent(comm_streams_[s].get(), begin_.event), "cudaStreamWaitEvent");
    }
    // Staging is chunk-major: chunk j of every rank, rank after rank.
    const std::size_t chunk_elems = static_cast<std::size_t>(rows) * k_;
    for (int j = 0; j < c.chunks; ++j) {
      const int s = j % c.streams;
      check_nccl(ncclAllGather(a_shard + j * chunk_elems, staging_.get() + j * chunk_elems * size_, chunk_elems,
                               ncclHalf, comms_[s]->get(), comm_streams_[s].get()),
                 "ncclAllGather");
      check_cuda(cudaEventRecord(arrived_[j].event, comm_streams_[s].get()), "cudaEventRecord");
    }
    for (int j = 0; j < c.chunks; ++j) {
      check_cuda(cudaStreamWaitEvent(compute_, arrived_[j].event), "cudaStreamWaitEvent");
      for (int r = 0; r < size_; ++r) {
        const half* a_block = staging_.get() + (static_cast<std::size_t>(j) * size_ + r) * chunk_elems;
        float* c_block = out + (static_cast<std::size_t>(r) * shard_rows_ + static_cast<std::size_t>(j) * rows) * n_;
        gemm::gemm(c.tile, a_block, b, c_block, block, compute_);
      }
    }
  }

  ncclComm_t comm() const { return comms_[0]->get(); }

 private:
  int size_, shard_rows_, k_, n_;
  cudaStream_t compute_;
  DeviceArray<half> staging_;
  std::vector<std::unique_ptr<NcclComm>> comms_;
  Stream comm_streams_[2];
  Event begin_;
  Event arrived_[8];
};

using Tuned = disttune::Autotuned<AgGemmConfig, std::tuple<int, int, int, int>,
                                  void(const half*, const half*, float*)>;

Tuned make_tuned(AllGatherGemm& op, int size, int shard_rows, int k, int n, cudaStream_t stream,
                 std::shared_ptr<disttune::Communicator> ranks) {
  Tuned::Spec spec;
  spec.identity = DISTTUNE_FUNCTION("allgather_gemm_nccl");
  spec.configs = config_space();
  spec.key = [=](const half* const&, const half* const&, float* const&) { return std::make_tuple(size, shard_rows, k, n); };
  spec.prune = [=](const AgGemmConfig& c, const half* const&, const half* const&, float* const&) {
    return shard_rows % c.chunks == 0 && gemm::fits(c.tile, {shard_rows / c.chunks, n, k});
  };
  spec.launch = [&op](const AgGemmConfig& c, const half* a, const half* b, float* out) { op.run(c, a, b, out); };
  spec.options.timer = std::make_shared<disttune::CudaTimer>(disttune::CudaTimerOptions{.stream = stream});
  spec.options.communicator = std::move(ranks);
  return Tuned(std::move(spec));
}

std::vector<half> random_halves(std::size_t count, unsigned seed, float scale) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal;
  std::vector<half> values(count);
  for (half& v : values) v = __float2half(normal(random) * scale);
  return values;
}

void run() {
  const MpiRank me = MpiRank::on_its_gpu();
  const int rank = me.rank, size = me.size;
  const int shard_rows = 2048, k = 4096, n = 2048;

  NcclComm engine_comm(me);  // the engine's collectives, apart from the operator's
  Stream compute;
  AllGatherGemm op(me, shard_rows, k, n, compute.get());
  const auto a_host = random_halves(static_cast<std::size_t>(shard_rows) * k, 1234u + rank, 1.0f / 64);
  const auto b_host = random_halves(static_cast<std::size_t>(k) * n, 99u, 1.0f);
  auto a_shard = upload(a_host);
  auto b = upload(b_host);
  const std::size_t c_elems = static_cast<std::size_t>(size) * shard_rows * n;
  auto out = device_array<float>(c_elems);
  auto expected = device_array<float>(c_elems);
  auto a_full = device_array<half>(static_cast<std::size_t>(size) * shard_rows * k);

  // The roll call over MPI names the ranks missing from a late collective (NCCL cannot).
  std::shared_ptr<disttune::Communicator> ranks = disttune::make_nccl_communicator(
      engine_comm.get(), compute.get(), std::nullopt, disttune::make_mpi_roll_call(MPI_COMM_WORLD));
  {
    Tuned tuned = make_tuned(op, size, shard_rows, k, n, compute.get(), ranks);
    tuned(a_shard.get(), b.get(), out.get());
    // Reference: one plain all-gather, then the reference GEMM.
    check_nccl(ncclAllGather(a_shard.get(), a_full.get(), a_host.size(), ncclHalf, op.comm(), compute.get()),
               "ncclAllGather");
    gemm::reference_gemm(a_full.get(), b.get(), expected.get(), {size * shard_rows, n, k}, compute.get());
    check_cuda(cudaStreamSynchronize(compute.get()), "cudaStreamSynchronize");
    const std::vector<float> got = download(out.get(), c_elems);
    const std::vector<float> want = download(expected.get(), c_elems);
    double worst = 0.0;
    for (std::size_t i = 0; i < c_elems; ++i) worst = std::fmax(worst, std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i])));
    if (!(worst < 1e-2)) throw std::runtime_error("allgather_gemm: wrong result, relative error " + std::to_string(worst));
    const auto report = tuned.last_report();
    if (rank == 0) {
      std::printf("allgather_gemm_nccl: %d ranks, A shard %dx%d, B %dx%d (fp16, fp32 out)\n", size, shard_rows, k, k, n);
      std::printf("%s", disttune::format_table(*report).c_str());
      std::printf("chosen config: %s; result checked (max relative error %.2e)\n",
                  report->candidates[report->best].config.c_str(), worst);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return nccl_world::run_on_ranks(argc, argv, "allgather_gemm_nccl", [] { run(); });
}
