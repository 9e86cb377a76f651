// Device facts from the driver, NVLink topology from NVML and the runtime version from
// libcudart, each read only if that library is present.
#include "cuda/device_facts.hpp"

#include <dlfcn.h>

#include <array>
#include <optional>
#include <string>

#include "cuda_driver/driver_api.hpp"
#include "cuda_driver/shared_library.hpp"

namespace disttune::detail {
namespace {

int attribute(CUdevice device, CUdevice_attribute which, const char* call) {
  int value = 0;
  check(driver().cuDeviceGetAttribute(&value, which, device), call);
  return value;
}

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// Whether every pair of GPUs is linked by NVLink, per NVML; nullopt if NVML cannot say.
std::optional<bool> nvlink_full_mesh() {
  using Status = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
  using NvmlDevice = struct NvmlDeviceOpaque*;
  constexpr int kP2pCapsNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
  constexpr int kP2pStatusOk = 0;    // NVML_P2P_STATUS_OK
  SharedLibrary nvml;
  try {
    nvml = SharedLibrary("libnvidia-ml.so.1");
  } catch (const std::exception&) {
    return std::nullopt;
  }
  auto init = reinterpret_cast<Status (*)()>(nvml.symbol("nvmlInit_v2"));
  auto shutdown = reinterpret_cast<Status (*)()>(nvml.symbol("nvmlShutdown"));
  auto count = reinterpret_cast<Status (*)(unsigned*)>(nvml.symbol("nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<Status (*)(unsigned, NvmlDevice*)>(
      nvml.symbol("nvmlDeviceGetHandleByIndex_v2"));
  auto p2p = reinterpret_cast<Status (*)(NvmlDevice, NvmlDevice, int, int*)>(
      nvml.symbol("nvmlDeviceGetP2PStatus"));
  if (!init || !shutdown || !count || !handle || !p2p || init() != 0) return std::nullopt;
  std::optional<bool> full_mesh;
  unsigned devices = 0;
  if (count(&devices) == 0) {
    full_mesh = true;
    for (unsigned a = 0; a < devices && full_mesh; ++a) {
      for (unsigned b = a + 1; b < devices && full_mesh; ++b) {
        NvmlDevice first = nullptr;
        NvmlDevice second = nullptr;
        int status = -1;
        if (handle(a, &first) != 0 || handle(b, &second) != 0 ||
            p2p(first, second, kP2pCapsNvlink, &status) != 0) {
          full_mesh = std::nullopt;
        } else if (status != kP2pStatusOk) {
          full_mesh = false;
        }
      }
    }
  }
  shutdown();
  return full_mesh;
}

/// cudaRuntimeGetVersion from a libcudart the process already has, if any.
std::optional<int> runtime_version() {
  using GetVersion = int (*)(int*);  // cudaError_t cudaRuntimeGetVersion(int*)
  auto read = [](GetVersion get) -> std::optional<int> {
    int version = 0;
    if (get == nullptr || get(&version) != 0) return std::nullopt;
    return version;
  };
  if (auto version = read(reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion")))) {
    return version;
  }
  for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}) {
    SharedLibrary cudart = SharedLibrary::if_loaded(name);
    if (!cudart.loaded()) continue;
    if (auto version = read(reinterpret_cast<GetVersion>(cudart.symbol("cudaRuntimeGetVersion")))) {
      return version;
    }
  }
  return std::nullopt;
}

}  // namespace

Value cuda_device_facts(CUdevice device) {
  const DriverApi& api = driver();
  std::array<char, 256> name{};
  check(api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), device), "cuDeviceGetName");
  int count = 0;
  check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  std::size_t memory = 0;
  check(api.cuDeviceTotalMem(&memory, device), "cuDeviceTotalMem");
  const int major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  const int minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                              "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  Value facts = {
      {"device", std::string(name.data())},
      {"device_count", count},
      {"compute_capability", std::to_string(major) + "." + std::to_string(minor)},
      {"sm_count", attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                             "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)")},
      {"memory_bytes", memory},
      {"l2_bytes", attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
                             "cuDeviceGetAttribute(L2_CACHE_SIZE)")},
  };
  if (count > 1) {
    if (auto full_mesh = nvlink_full_mesh()) facts["nvlink_full_mesh"] = *full_mesh;
  }
  return facts;
}

Value cuda_versions() {
  int driver_version = 0;
  check(driver().cuDriverGetVersion(&driver_version), "cuDriverGetVersion");
  Value versions = {{"cuda_driver", version_text(driver_version)}};
  if (auto runtime = runtime_version()) versions["cuda_runtime"] = version_text(*runtime);
  return versions;
}

}  // namespace disttune::detail
