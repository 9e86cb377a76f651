// The MPI backend of the Communicator seam (target disttune::mpi): deadlines on every collective.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

#include "disttune/communicator.hpp"
#include "disttune/roll_call.hpp"

namespace disttune {

/// Exit code of an MPI job ended by a missed collective deadline (passed to MPI_Abort).
inline constexpr int kMpiTimeoutExitCode = 3;

namespace detail {
/// `comm_handle` points at an MPI_Comm of `handle_size` bytes (checked against sizeof(MPI_Comm)).
std::unique_ptr<Communicator> make_mpi_communicator_from_handle(const void* comm_handle,
                                                                std::size_t handle_size);
std::shared_ptr<RankRollCall> make_mpi_roll_call_from_handle(const void* comm_handle, std::size_t handle_size);
}  // namespace detail

/// A Communicator over MPI_COMM_WORLD. See the overload below for what it promises.
std::unique_ptr<Communicator> make_mpi_communicator();

/// A Communicator over the caller's communicator `comm` (an MPI_Comm; this header does not
/// include mpi.h). MPI must be initialised (else std::logic_error); making one is collective
/// over `comm`. It duplicates `comm`, so its traffic never mixes with the caller's, and frees
/// the duplicates when destroyed (destroy it before MPI_Finalize). The local rank is the rank
/// among the processes of `comm` that share this node's memory.
///
/// Each collective is non-blocking MPI polled against the context's deadline. On expiry it
/// prints one error to stderr naming the context, how long it waited and which ranks did not
/// arrive (asked of the ranks that answer), then ends the job with
/// MPI_Abort(kMpiTimeoutExitCode): an MPI collective cannot be cancelled, so it never returns.
/// Calls from several threads are serialised; every rank must make the same calls in order.
template <class Comm>
  requires std::is_trivially_copyable_v<Comm>
std::unique_ptr<Communicator> make_mpi_communicator(const Comm& comm) {
  return detail::make_mpi_communicator_from_handle(&comm, sizeof(Comm));
}

/// A RankRollCall over the caller's communicator `comm` (an MPI_Comm), for a Communicator
/// whose transport cannot name the missing ranks (make_nccl_communicator() in
/// disttune/nccl.hpp): its ranks must be those of `comm`, in the same order. Making one is
/// collective over `comm`, which it duplicates; destroy it before MPI_Finalize. Queries and
/// answers are non-blocking point-to-point messages; a survey waits 0.5 s for the answers.
/// A killed rank survives in the job only if mpirun is told to keep going
/// (`mpirun --enable-recovery`); otherwise mpirun ends every rank.
template <class Comm>
  requires std::is_trivially_copyable_v<Comm>
std::shared_ptr<RankRollCall> make_mpi_roll_call(const Comm& comm) {
  return detail::make_mpi_roll_call_from_handle(&comm, sizeof(Comm));
}

}  // namespace disttune
