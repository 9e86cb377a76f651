// RankRollCall: an out-of-band channel that names the ranks missing from a late collective.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace disttune {

/// Where a rank waits: the collective's sequence number (every rank numbers the collectives
/// of one communicator alike), its description, and when the wait began.
struct CollectivePosition {
  std::uint64_t sequence = 0;
  std::string where;
  std::chrono::steady_clock::time_point since;
};

/// For a Communicator whose transport cannot tell which ranks did not arrive (NCCL): while
/// a rank waits in a collective it answers the queries of other ranks through this channel;
/// a rank whose collective is late asks every other rank where it is. A rank that does not
/// answer is busy outside the collectives (hung in its own work) or gone (killed).
/// make_mpi_roll_call() (disttune/mpi.hpp) is one over MPI.
class RankRollCall {
 public:
  virtual ~RankRollCall() = default;
  /// Called again and again while this rank waits at `position`: answers the queries that
  /// arrived. Never blocks.
  virtual void answer(const CollectivePosition& position) = 0;
  /// The collective at `position` is late: asks every other rank where it is, waits a short
  /// grace period for the answers, and returns lines for the error message naming the ranks
  /// that did not answer, those waiting in another collective, and those waiting here.
  virtual std::string survey(const CollectivePosition& position) = 0;
};

}  // namespace disttune
