// The flush buffers: one per device, kept for the life of the process.
#include "cuda/l2_flush.hpp"

#include <algorithm>
#include <map>
#include <mutex>

namespace disttune::detail {

const DeviceBuffer& l2_flush_buffer(CUdevice device) {
  static std::mutex mutex;
  // Never freed, not even at exit: cuMemFree waits for the whole device, which may never
  // finish after a collective timed out (a communication kernel left spinning).
  static auto* buffers = new std::map<CUdevice, DeviceBuffer>();
  std::lock_guard lock(mutex);
  auto found = buffers->find(device);
  if (found != buffers->end()) return found->second;
  int l2_bytes = 0;
  check(driver().cuDeviceGetAttribute(&l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device),
        "cuDeviceGetAttribute(L2_CACHE_SIZE)");
  // Twice the L2: a partitioned L2 (Hopper's two halves) may hold a line in both.
  constexpr std::size_t kMinimumBytes = std::size_t{1} << 20;
  const std::size_t bytes = std::max(kMinimumBytes, 2 * static_cast<std::size_t>(l2_bytes));
  return buffers->emplace(device, DeviceBuffer(device, bytes)).first->second;
}

}  // namespace disttune::detail
