// The CUDA driver API, loaded at run time from libcuda.so.1: one table of entry points.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "cuda_driver/cuda_types.hpp"

namespace disttune::detail {

/// The driver entry points disttune calls, with the ABI of CUDA 12.0 (what
/// cuGetProcAddress returns when asked for version 12000, on any newer driver too).
struct DriverApi {
  CUresult (*cuInit)(unsigned int flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceTotalMem)(std::size_t* bytes, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext* context) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext* context) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice* device) = nullptr;
  CUresult (*cuStreamGetCtx)(CUstream stream, CUcontext* context) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuStreamQuery)(CUstream stream) = nullptr;
  CUresult (*cuStreamIsCapturing)(CUstream stream, CUstreamCaptureStatus* status) = nullptr;
  CUresult (*cuStreamBeginCapture)(CUstream stream, CUstreamCaptureMode mode) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph* graph) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph,
                                          unsigned long long flags) = nullptr;
  CUresult (*cuGraphUpload)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph graph) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec) = nullptr;
  CUresult (*cuEventCreate)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventQuery)(CUevent event) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, std::size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr pointer, unsigned char value, std::size_t count,
                              CUstream stream) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr destination, const void* source, std::size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void* destination, CUdeviceptr source, std::size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params,
                             void** extra) = nullptr;
};

/// The process's driver table, loaded and initialised (cuInit) on first use. Throws
/// std::runtime_error saying why if libcuda.so.1 is missing, too old, or cuInit fails
/// (for example: no device).
const DriverApi& driver();

/// Why driver() would throw, or nullopt if it works.
std::optional<std::string> driver_unavailable_reason();

/// "<call> failed: <error name> (<error string>)" for a driver error.
std::string describe_error(CUresult result, const char* call);

/// Throws std::runtime_error(describe_error(...)) unless `result` is CUDA_SUCCESS.
void check(CUresult result, const char* call);

}  // namespace disttune::detail
