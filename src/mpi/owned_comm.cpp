// OwnedComm: a move-only MPI communicator that frees itself (MPI_Comm_free) when destroyed.
#include "mpi/owned_comm.hpp"

#include <utility>

#include "mpi/mpi_check.hpp"

namespace disttune::detail {

OwnedComm::OwnedComm(MPI_Comm comm) : comm_(comm) {
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

OwnedComm OwnedComm::duplicate(MPI_Comm comm) {
  MPI_Comm copy = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &copy), "MPI_Comm_dup");
  return OwnedComm(copy);
}

OwnedComm OwnedComm::split_by_node(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  return OwnedComm(node);
}

OwnedComm::OwnedComm(OwnedComm&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}

OwnedComm& OwnedComm::operator=(OwnedComm&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
  }
  return *this;
}

OwnedComm::~OwnedComm() { release(); }

void OwnedComm::release() {
  if (comm_ == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

int OwnedComm::rank() const {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm_, &rank), "MPI_Comm_rank");
  return rank;
}

int OwnedComm::size() const {
  int size = 0;
  check_mpi(MPI_Comm_size(comm_, &size), "MPI_Comm_size");
  return size;
}

}  // namespace disttune::detail
