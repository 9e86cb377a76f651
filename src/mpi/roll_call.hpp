// RollCall: when a collective is late, asks every rank where it is, over a control communicator.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "disttune/roll_call.hpp"

namespace disttune::detail {

/// How long a late rank waits for the others to say where they are.
inline constexpr std::chrono::milliseconds kRollCallGrace{500};

/// Where one rank said it was: in which collective (by sequence number and description)
/// and for how long it had been waiting there.
struct RankWhereabouts {
  std::uint64_t sequence = 0;
  std::string where;
  double waited_s = 0.0;
};

/// Ranks that wait in a collective answer queries; a rank whose collective is late asks
/// all the others. A rank that is not inside one of this communicator's collectives (busy
/// in its own work, or gone) cannot answer: that is how the missing ranks are found.
/// Uses its own communicator so that queries never match collective traffic.
class RollCall {
 public:
  /// `control` is not owned and must outlive this object.
  explicit RollCall(MPI_Comm control);
  RollCall(const RollCall&) = delete;
  RollCall& operator=(const RollCall&) = delete;
  /// Completes or cancels answers still in flight.
  ~RollCall();

  /// Answers every query that has arrived, saying this rank waits in `waiting`.
  void answer_queries(const CollectivePosition& waiting);

  /// Asks every other rank where it is and waits up to `grace` for the answers (answering
  /// other ranks' queries meanwhile). Index = rank; nullopt = no answer; this rank's own
  /// entry is `waiting`.
  std::vector<std::optional<RankWhereabouts>> survey(const CollectivePosition& waiting,
                                                     std::chrono::milliseconds grace);

 private:
  struct PendingSend {
    std::string bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  void send(int rank, int tag, std::string bytes);
  void reap_sends();

  MPI_Comm control_;
  int rank_ = 0;
  int size_ = 1;
  std::list<PendingSend> sends_;  // a list: buffers must not move while MPI reads them
};

/// The lines of a late collective's error (each starting "\ndisttune:   "): the ranks that
/// did not answer within `grace`, those waiting in another collective, and those waiting in
/// collective `sequence`.
std::string describe_survey(const std::vector<std::optional<RankWhereabouts>>& answers,
                            std::uint64_t sequence, std::chrono::milliseconds grace);

}  // namespace disttune::detail
