// check_mpi: an MPI return code that is not MPI_SUCCESS becomes an exception naming the call.
#pragma once

#include <mpi.h>

namespace disttune::detail {

/// Returns if `code` is MPI_SUCCESS; otherwise throws std::runtime_error
/// "disttune: <call> failed: <MPI's error string>".
void check_mpi(int code, const char* call);

}  // namespace disttune::detail
