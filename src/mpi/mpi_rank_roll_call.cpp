// make_mpi_roll_call: the RankRollCall over MPI point-to-point messages on a duplicated
// communicator.
#include <cstring>
#include <stdexcept>

#include "disttune/mpi.hpp"
#include "mpi/owned_comm.hpp"
#include "mpi/roll_call.hpp"

namespace disttune::detail {
namespace {

class MpiRankRollCall final : public RankRollCall {
 public:
  explicit MpiRankRollCall(MPI_Comm comm)
      : control_(OwnedComm::duplicate(comm)), roll_call_(control_.get()) {}

  void answer(const CollectivePosition& position) override {
    roll_call_.answer_queries(waiting_in(position));
  }

  std::string survey(const CollectivePosition& position) override {
    return describe_survey(roll_call_.survey(waiting_in(position), kRollCallGrace),
                           position.sequence, kRollCallGrace);
  }

 private:
  static WaitingIn waiting_in(const CollectivePosition& position) {
    return WaitingIn{position.sequence, position.where, position.since};
  }

  OwnedComm control_;  // declared first: the roll call uses it until it is destroyed
  RollCall roll_call_;
};

}  // namespace

std::shared_ptr<RankRollCall> make_mpi_roll_call_from_handle(const void* comm_handle,
                                                             std::size_t handle_size) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    throw std::logic_error(
        "disttune: make_mpi_roll_call needs MPI to be initialised (MPI_Init) and not finalised");
  }
  if (handle_size != sizeof(MPI_Comm)) {
    throw std::invalid_argument("disttune: make_mpi_roll_call got a handle of " +
                                std::to_string(handle_size) + " bytes; an MPI_Comm has " +
                                std::to_string(sizeof(MPI_Comm)));
  }
  MPI_Comm comm = MPI_COMM_NULL;
  std::memcpy(&comm, comm_handle, sizeof comm);
  if (comm == MPI_COMM_NULL)
    throw std::invalid_argument("disttune: make_mpi_roll_call got MPI_COMM_NULL");
  return std::make_shared<MpiRankRollCall>(comm);
}

}  // namespace disttune::detail
