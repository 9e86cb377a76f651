// make_mpi_roll_call: the RankRollCall over MPI point-to-point messages on a duplicated
// communicator.
#include "disttune/mpi.hpp"
#include "mpi/comm_handle.hpp"
#include "mpi/owned_comm.hpp"
#include "mpi/roll_call.hpp"

namespace disttune::detail {
namespace {

class MpiRankRollCall final : public RankRollCall {
 public:
  explicit MpiRankRollCall(MPI_Comm comm)
      : control_(OwnedComm::duplicate(comm)), roll_call_(control_.get()) {}

  void answer(const CollectivePosition& position) override {
    roll_call_.answer_queries(position);
  }

  std::string survey(const CollectivePosition& position) override {
    return describe_survey(roll_call_.survey(position, kRollCallGrace),
                           position.sequence, kRollCallGrace);
  }

 private:
  OwnedComm control_;  // declared first: the roll call uses it until it is destroyed
  RollCall roll_call_;
};

}  // namespace

std::shared_ptr<RankRollCall> make_mpi_roll_call_from_handle(const void* comm_handle,
                                                             std::size_t handle_size) {
  const MPI_Comm comm = comm_from_handle(comm_handle, handle_size, "make_mpi_roll_call");
  return std::make_shared<MpiRankRollCall>(comm);
}

}  // namespace disttune::detail
