// FixedGroupCommunicator: the base of a Communicator whose place in its group is known once made.
#pragma once

#include "disttune/communicator.hpp"

namespace disttune::detail {

/// A Communicator over a group of ranks that does not change (MPI, NCCL): the derived class
/// sets its rank, the group's size and its rank on its node when it is made; this answers them.
class FixedGroupCommunicator : public Communicator {
 public:
  int rank() const final { return rank_; }
  int size() const final { return size_; }
  int local_rank() const final { return local_rank_; }

 protected:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
};

}  // namespace disttune::detail
