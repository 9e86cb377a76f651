// check_mpi: an MPI return code that is not MPI_SUCCESS becomes an exception naming the call.
#include "mpi/mpi_check.hpp"

#include <stdexcept>
#include <string>

namespace disttune::detail {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  const std::string reason = length > 0 ? std::string(text, static_cast<std::size_t>(length))
                                        : "error code " + std::to_string(code);
  throw std::runtime_error(std::string("disttune: ") + call + " failed: " + reason);
}

}  // namespace disttune::detail
