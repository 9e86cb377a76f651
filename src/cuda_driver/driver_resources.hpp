// Move-only owners of driver objects (events, device memory, graphs, contexts) that release
// themselves; and a guard that makes a context current for a scope.
#pragma once

#include <cstddef>
#include <utility>

#include "cuda_driver/driver_api.hpp"

namespace disttune::detail {

/// Owns one driver handle; `release` frees it (errors ignored: it runs in destructors).
template <class Handle, void (*release)(Handle)>
class DriverHandle {
 public:
  DriverHandle() = default;
  explicit DriverHandle(Handle handle) : handle_(handle) {}
  ~DriverHandle() { reset(); }
  DriverHandle(DriverHandle&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  DriverHandle& operator=(DriverHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  DriverHandle(const DriverHandle&) = delete;
  DriverHandle& operator=(const DriverHandle&) = delete;

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Handle{}; }
  void reset() {
    if (handle_ != Handle{}) release(std::exchange(handle_, Handle{}));
  }

 private:
  Handle handle_{};
};

inline void destroy_event(CUevent event) { driver().cuEventDestroy(event); }
inline void destroy_graph(CUgraph graph) { driver().cuGraphDestroy(graph); }
inline void destroy_graph_exec(CUgraphExec exec) { driver().cuGraphExecDestroy(exec); }

using Event = DriverHandle<CUevent, destroy_event>;
using Graph = DriverHandle<CUgraph, destroy_graph>;
using GraphExec = DriverHandle<CUgraphExec, destroy_graph_exec>;

/// A timing-enabled event, created in the current context.
inline Event make_event() {
  CUevent event = nullptr;
  check(driver().cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
  return Event(event);
}

/// Makes `context` current for the guard's life if it is not already (push, then pop).
class ContextGuard {
 public:
  explicit ContextGuard(CUcontext context) {
    CUcontext current = nullptr;
    check(driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current != context) {
      check(driver().cuCtxPushCurrent(context), "cuCtxPushCurrent");
      pushed_ = true;
    }
  }
  ~ContextGuard() {
    if (pushed_) {
      CUcontext popped = nullptr;
      driver().cuCtxPopCurrent(&popped);
    }
  }
  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;

 private:
  bool pushed_ = false;
};

/// A reference on a device's primary context (the CUDA runtime's context), released on death.
class PrimaryContext {
 public:
  explicit PrimaryContext(CUdevice device) : device_(device) {
    check(driver().cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
  }
  ~PrimaryContext() {
    if (context_ != nullptr) driver().cuDevicePrimaryCtxRelease(device_);
  }
  PrimaryContext(PrimaryContext&& other) noexcept
      : device_(other.device_), context_(std::exchange(other.context_, nullptr)) {}
  PrimaryContext& operator=(PrimaryContext&&) = delete;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  CUcontext get() const { return context_; }
  CUdevice device() const { return device_; }

 private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

/// Device memory in the primary context of one device; freed (in that context) on death.
class DeviceBuffer {
 public:
  DeviceBuffer(CUdevice device, std::size_t bytes) : context_(device), bytes_(bytes) {
    ContextGuard current(context_.get());
    check(driver().cuMemAlloc(&pointer_, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() {
    if (pointer_ == 0) return;
    CUcontext previous = nullptr;
    if (driver().cuCtxPushCurrent(context_.get()) != CUDA_SUCCESS) return;
    driver().cuMemFree(pointer_);
    driver().cuCtxPopCurrent(&previous);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : context_(std::move(other.context_)),
        pointer_(std::exchange(other.pointer_, 0)),
        bytes_(other.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr get() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }

 private:
  PrimaryContext context_;
  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace disttune::detail
