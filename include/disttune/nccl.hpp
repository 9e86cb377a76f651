// The NCCL backend of the Communicator seam (target disttune::nccl): a caller's NCCL
// communicator and CUDA stream, with deadlines on every collective.
#pragma once

#include <memory>
#include <optional>

#include "disttune/communicator.hpp"
#include "disttune/roll_call.hpp"

namespace disttune {

/// A Communicator over the caller's NCCL communicator `nccl_comm` (an ncclComm_t), whose
/// operations go on `stream` (a cudaStream_t or CUstream; nullptr: the legacy default stream)
/// of the communicator's device. The caller keeps owning both. `local_rank` is this rank's
/// index on its node; when absent it is found by gathering host names (a collective).
///
/// Each collective copies its few bytes through device scratch memory (allocated with the
/// CUDA driver API, kept and grown as needed) and polls the stream and
/// ncclCommGetAsyncError until it completes or the context's deadline passes. On expiry or
/// an NCCL error it aborts `nccl_comm` (ncclCommAbort) and throws CollectiveTimeout (or
/// std::runtime_error) naming the context. NCCL cannot tell which ranks did not arrive:
/// with `roll_call` (e.g. make_mpi_roll_call() over the same ranks) the waiting ranks answer
/// its queries, and a late rank asks the others, so the error names the ranks that did not
/// arrive (killed, or hung in their own work) within the deadline + 0.5 s.
/// After that, `nccl_comm` is gone (neither use nor destroy it) and later calls throw
/// std::logic_error. Throws std::runtime_error if the CUDA driver cannot be loaded.
/// Calls from several threads are serialised; every rank must make the same calls in order.
std::unique_ptr<Communicator> make_nccl_communicator(void* nccl_comm, void* stream,
                                                     std::optional<int> local_rank = std::nullopt,
                                                     std::shared_ptr<RankRollCall> roll_call = nullptr);

}  // namespace disttune
