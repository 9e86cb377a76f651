// comm_from_handle: checks MPI's state and the handle, then reads the MPI_Comm out of it.
#include "mpi/comm_handle.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace disttune::detail {

MPI_Comm comm_from_handle(const void* handle, std::size_t handle_size, std::string_view caller) {
  const std::string name(caller);
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    throw std::logic_error("disttune: " + name +
                           " needs MPI to be initialised (MPI_Init) and not finalised");
  }
  if (handle_size != sizeof(MPI_Comm)) {
    throw std::invalid_argument("disttune: " + name + " got a handle of " +
                                std::to_string(handle_size) + " bytes; an MPI_Comm has " +
                                std::to_string(sizeof(MPI_Comm)));
  }
  MPI_Comm comm = MPI_COMM_NULL;
  std::memcpy(&comm, handle, sizeof comm);
  if (comm == MPI_COMM_NULL) throw std::invalid_argument("disttune: " + name + " got MPI_COMM_NULL");
  return comm;
}

}  // namespace disttune::detail
