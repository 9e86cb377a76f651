// MpiCommunicator: the Communicator over MPI non-blocking collectives, polled against deadlines.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "communicators/fixed_group_communicator.hpp"
#include "disttune/communicator.hpp"
#include "mpi/owned_comm.hpp"
#include "mpi/roll_call.hpp"

namespace disttune::detail {

/// See make_mpi_communicator() in disttune/mpi.hpp for the promises.
class MpiCommunicator final : public FixedGroupCommunicator {
 public:
  /// Collective over `comm`, which it duplicates (twice: collectives and roll calls).
  explicit MpiCommunicator(MPI_Comm comm);

  void barrier(const CollectiveContext& context) override;
  void all_reduce_max(std::span<double> values, const CollectiveContext& context) override;
  std::vector<std::string> all_gather(const std::string& bytes,
                                      const CollectiveContext& context) override;

 private:
  /// Starts a collective call: the next sequence number, its description, the time.
  CollectivePosition begin(const CollectiveContext& context);
  /// Polls `request` until it completes or the deadline passes; then reports and aborts.
  void wait(MPI_Request& request, const CollectivePosition& waiting,
            std::chrono::steady_clock::time_point deadline);
  [[noreturn]] void abort_late(const CollectivePosition& waiting);

  OwnedComm collectives_;
  OwnedComm control_;
  RollCall roll_call_;
  std::uint64_t sequence_ = 0;
  std::mutex mutex_;  // one collective at a time
};

}  // namespace disttune::detail
