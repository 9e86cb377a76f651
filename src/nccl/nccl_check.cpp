// check_nccl: an NCCL result that is an error becomes an exception naming the call.
#include "nccl/nccl_check.hpp"

#include <stdexcept>
#include <string>

namespace disttune::detail {

void check_nccl(ncclResult_t result, const char* call, ncclComm_t comm) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  std::string reason = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') reason += ": " + std::string(last);
  throw std::runtime_error(std::string("disttune: ") + call + " failed: " + reason);
}

}  // namespace disttune::detail
