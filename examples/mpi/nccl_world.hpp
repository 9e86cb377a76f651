// NcclWorld: one GPU per MPI rank and an NCCL communicator over every rank, for the NCCL
// examples and the multi-GPU tests (MPI hands out NCCL's unique id; NCCL does the rest), and
// the examples' main().
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "../cuda/device_resources.cuh"
#include "disttune/cuda.hpp"

namespace nccl_world {

using cuda_example::check_cuda;
using cuda_example::Stream;

inline void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess)
    throw std::runtime_error(std::string(call) + ": " + ncclGetErrorString(result));
}

/// This process's MPI rank and the job's size; the GPU is chosen as rank % visible GPUs.
struct MpiRank {
  int rank = 0;
  int size = 1;

  static MpiRank on_its_gpu() {
    MpiRank me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &me.size);
    int devices = 0;
    check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    check_cuda(cudaSetDevice(me.rank % devices), "cudaSetDevice");
    return me;
  }
};

/// An NCCL communicator over every MPI rank (collective over MPI_COMM_WORLD), destroyed at
/// the end unless abandon()ed: after disttune aborted it (ncclCommAbort) it must not be.
class NcclComm {
 public:
  explicit NcclComm(const MpiRank& me) {
    ncclUniqueId id;
    if (me.rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    check_nccl(ncclCommInitRank(&comm_, me.size, id, me.rank), "ncclCommInitRank");
  }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ~NcclComm() {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
  }

  ncclComm_t get() const { return comm_; }
  void abandon() { comm_ = nullptr; }

 private:
  ncclComm_t comm_ = nullptr;
};

/// The main() of an example run by mpirun: MPI_Init, then `body` when this rank has a CUDA
/// device (else 1, after MPI_Finalize); a throw from `body` is printed, naming `program`, and
/// aborts every rank (MPI_Abort 1); then MPI_Finalize and 0.
template <class Body>
int run_on_ranks(int& argc, char**& argv, const char* program, Body&& body) {
  MPI_Init(&argc, &argv);
  if (auto reason = disttune::cuda_unavailable_reason()) {
    std::fprintf(stderr, "%s needs a CUDA device: %s\n", program, reason->c_str());
    MPI_Finalize();
    return 1;
  }
  try {
    body();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s failed: %s\n", program, error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

}  // namespace nccl_world
