// check_nccl: an NCCL result that is an error becomes an exception naming the call.
#pragma once

#include <nccl.h>

namespace disttune::detail {

/// Returns if `result` is ncclSuccess or ncclInProgress (a non-blocking communicator still
/// working); otherwise throws std::runtime_error "disttune: <call> failed: <NCCL's reason>".
void check_nccl(ncclResult_t result, const char* call, ncclComm_t comm);

}  // namespace disttune::detail
