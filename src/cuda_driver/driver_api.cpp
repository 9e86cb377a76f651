// The driver table: libcuda.so.1 opened once, entry points taken with cuGetProcAddress.
#include "cuda_driver/driver_api.hpp"

#include <stdexcept>
#include <utility>

#include "cuda_driver/shared_library.hpp"

namespace disttune::detail {
namespace {

/// The driver API version whose ABI DriverApi's pointer types declare.
constexpr int kDriverAbiVersion = 12000;

using GetProcAddressV2 = CUresult (*)(const char*, void**, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult*);
using GetProcAddressV1 = CUresult (*)(const char*, void**, int, cuuint64_t);

struct LoadedDriver {
  SharedLibrary library;
  DriverApi api;
  std::string error;  ///< why the driver cannot be used; empty if it can
};

std::string describe_error_with(const DriverApi& api, CUresult result, const char* call) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString != nullptr) api.cuGetErrorString(result, &text);
  std::string message = std::string(call) + " failed: ";
  message += name != nullptr ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (text != nullptr) message += std::string(" (") + text + ")";
  return message;
}

class EntryPointResolver {
 public:
  explicit EntryPointResolver(const SharedLibrary& library)
      : v2_(reinterpret_cast<GetProcAddressV2>(library.symbol("cuGetProcAddress_v2"))),
        v1_(reinterpret_cast<GetProcAddressV1>(library.symbol("cuGetProcAddress"))) {}

  bool usable() const { return v2_ != nullptr || v1_ != nullptr; }

  /// Stores `name`'s entry point in `slot`; returns an error text, empty on success.
  template <class Function>
  std::string resolve(const char* name, Function*& slot) const {
    void* address = nullptr;
    CUresult result = CUDA_SUCCESS;
    if (v2_ != nullptr) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
      result = v2_(name, &address, kDriverAbiVersion, 0, &status);
      if (result == CUDA_SUCCESS && status != CU_GET_PROC_ADDRESS_SUCCESS) address = nullptr;
    } else {
      result = v1_(name, &address, kDriverAbiVersion, 0);
    }
    if (result != CUDA_SUCCESS || address == nullptr) {
      return std::string("libcuda.so.1 has no entry point ") + name +
             " for CUDA 12.0 (the driver is older than CUDA 12)";
    }
    slot = reinterpret_cast<Function*>(address);
    return {};
  }

 private:
  GetProcAddressV2 v2_;
  GetProcAddressV1 v1_;
};

std::string load_entry_points(const EntryPointResolver& resolver, DriverApi& api) {
  std::string error;
  // #name is the driver's base name even where <cuda.h> renames the member (cuMemAlloc_v2).
#define DISTTUNE_LOAD_ENTRY(name) \
  if (error.empty()) error = resolver.resolve(#name, api.name)
  DISTTUNE_LOAD_ENTRY(cuGetErrorName);
  DISTTUNE_LOAD_ENTRY(cuGetErrorString);
  DISTTUNE_LOAD_ENTRY(cuInit);
  DISTTUNE_LOAD_ENTRY(cuDriverGetVersion);
  DISTTUNE_LOAD_ENTRY(cuDeviceGetCount);
  DISTTUNE_LOAD_ENTRY(cuDeviceGet);
  DISTTUNE_LOAD_ENTRY(cuDeviceGetName);
  DISTTUNE_LOAD_ENTRY(cuDeviceGetAttribute);
  DISTTUNE_LOAD_ENTRY(cuDeviceTotalMem);
  DISTTUNE_LOAD_ENTRY(cuDevicePrimaryCtxRetain);
  DISTTUNE_LOAD_ENTRY(cuDevicePrimaryCtxRelease);
  DISTTUNE_LOAD_ENTRY(cuCtxGetCurrent);
  DISTTUNE_LOAD_ENTRY(cuCtxPushCurrent);
  DISTTUNE_LOAD_ENTRY(cuCtxPopCurrent);
  DISTTUNE_LOAD_ENTRY(cuCtxGetDevice);
  DISTTUNE_LOAD_ENTRY(cuStreamGetCtx);
  DISTTUNE_LOAD_ENTRY(cuStreamSynchronize);
  DISTTUNE_LOAD_ENTRY(cuStreamQuery);
  DISTTUNE_LOAD_ENTRY(cuStreamIsCapturing);
  DISTTUNE_LOAD_ENTRY(cuStreamBeginCapture);
  DISTTUNE_LOAD_ENTRY(cuStreamEndCapture);
  DISTTUNE_LOAD_ENTRY(cuGraphInstantiateWithFlags);
  DISTTUNE_LOAD_ENTRY(cuGraphUpload);
  DISTTUNE_LOAD_ENTRY(cuGraphLaunch);
  DISTTUNE_LOAD_ENTRY(cuGraphDestroy);
  DISTTUNE_LOAD_ENTRY(cuGraphExecDestroy);
  DISTTUNE_LOAD_ENTRY(cuEventCreate);
  DISTTUNE_LOAD_ENTRY(cuEventDestroy);
  DISTTUNE_LOAD_ENTRY(cuEventRecord);
  DISTTUNE_LOAD_ENTRY(cuEventQuery);
  DISTTUNE_LOAD_ENTRY(cuEventSynchronize);
  DISTTUNE_LOAD_ENTRY(cuEventElapsedTime);
  DISTTUNE_LOAD_ENTRY(cuMemAlloc);
  DISTTUNE_LOAD_ENTRY(cuMemFree);
  DISTTUNE_LOAD_ENTRY(cuMemsetD8Async);
  DISTTUNE_LOAD_ENTRY(cuMemcpyHtoDAsync);
  DISTTUNE_LOAD_ENTRY(cuMemcpyDtoHAsync);
  DISTTUNE_LOAD_ENTRY(cuModuleLoadData);
  DISTTUNE_LOAD_ENTRY(cuModuleUnload);
  DISTTUNE_LOAD_ENTRY(cuModuleGetFunction);
  DISTTUNE_LOAD_ENTRY(cuLaunchKernel);
#undef DISTTUNE_LOAD_ENTRY
  return error;
}

LoadedDriver load_driver() {
  LoadedDriver loaded;
  try {
    loaded.library = SharedLibrary("libcuda.so.1");
  } catch (const std::exception& error) {
    loaded.error = std::string("the CUDA driver is not available: ") + error.what();
    return loaded;
  }
  const EntryPointResolver resolver(loaded.library);
  if (!resolver.usable()) {
    loaded.error = "libcuda.so.1 has no cuGetProcAddress (the driver is older than CUDA 11.3)";
    return loaded;
  }
  loaded.error = load_entry_points(resolver, loaded.api);
  if (!loaded.error.empty()) return loaded;
  const CUresult result = loaded.api.cuInit(0);
  if (result != CUDA_SUCCESS) loaded.error = describe_error_with(loaded.api, result, "cuInit");
  return loaded;
}

const LoadedDriver& loaded_driver() {
  static const LoadedDriver loaded = load_driver();
  return loaded;
}

}  // namespace

const DriverApi& driver() {
  const LoadedDriver& loaded = loaded_driver();
  if (!loaded.error.empty()) throw std::runtime_error("disttune: " + loaded.error);
  return loaded.api;
}

std::optional<std::string> driver_unavailable_reason() {
  const LoadedDriver& loaded = loaded_driver();
  if (loaded.error.empty()) return std::nullopt;
  return loaded.error;
}

std::string describe_error(CUresult result, const char* call) {
  return describe_error_with(loaded_driver().api, result, call);
}

void check(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) throw std::runtime_error("disttune: " + describe_error(result, call));
}

}  // namespace disttune::detail
