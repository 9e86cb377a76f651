// comm_from_handle: the MPI_Comm behind the opaque handle the public make_mpi_* functions take.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string_view>

namespace disttune::detail {

/// The MPI_Comm stored at `handle` (`handle_size` bytes). Throws std::logic_error unless MPI
/// is initialised and not finalised, std::invalid_argument for a handle of the wrong size or
/// MPI_COMM_NULL; every message names `caller` (the public function asked).
MPI_Comm comm_from_handle(const void* handle, std::size_t handle_size, std::string_view caller);

}  // namespace disttune::detail
