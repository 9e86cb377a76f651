// ClockProbe: embedded PTX kernels for a busy GPU and for reading its SM clock.
#include "cuda/clock_probe.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_driver/driver_api.hpp"

namespace disttune::detail {
namespace {

/// disttune_busy(ns): spins until %globaltimer has advanced by ns.
/// disttune_clock(out, cycles): thread 0 spins `cycles` SM cycles and stores the cycles and
/// the %globaltimer nanoseconds it took at out[0] and out[1].
constexpr const char* kPtx = R"(
.version 7.0
.target sm_70
.address_size 64

.visible .entry disttune_busy(.param .u64 ns)
{
  .reg .pred %p<2>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
  add.s64 %rd3, %rd2, %rd1;
BUSY:
  mov.u64 %rd4, %globaltimer;
  setp.lt.u64 %p1, %rd4, %rd3;
  @%p1 bra BUSY;
  ret;
}

.visible .entry disttune_clock(.param .u64 out, .param .u64 cycles)
{
  .reg .pred %p<2>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [cycles];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u64 %rd3, %globaltimer;
  mov.u64 %rd4, %clock64;
  add.s64 %rd5, %rd4, %rd2;
SPIN:
  mov.u64 %rd6, %clock64;
  setp.lt.u64 %p1, %rd6, %rd5;
  @%p1 bra SPIN;
  mov.u64 %rd7, %globaltimer;
  sub.s64 %rd8, %rd6, %rd4;
  sub.s64 %rd9, %rd7, %rd3;
  st.global.u64 [%rd1], %rd8;
  st.global.u64 [%rd1+8], %rd9;
  ret;
}
)";

/// Cycles a probe spins: about 20 us at 2 GHz, long against %globaltimer's update period
/// (up to 1 us on some devices), short against a kernel worth tuning.
constexpr std::uint64_t kProbeCycles = 40000;
/// Probes between two read()s at most (16 bytes each).
constexpr std::size_t kMaxProbes = 8192;

/// The probe kernels of one context and the counter buffers its probes have used. Kept for
/// the life of the process, never unloaded or freed: cuModuleUnload and cuMemFree wait for
/// the whole device, and after a collective timed out (a rank lost mid-tuning) a
/// communication kernel may spin on the device for ever; a timer's destruction must never
/// wait for it.
struct ContextProbes {
  CUfunction busy = nullptr;
  CUfunction clock = nullptr;
  int sm_count = 1;
  double rated_mhz = 0.0;
  std::vector<std::unique_ptr<DeviceBuffer>> idle_slots;  ///< returned by destroyed probes
};

std::mutex& probes_mutex() {
  static std::mutex mutex;
  return mutex;
}

/// The current context's kernels (loaded on first use), under probes_mutex().
ContextProbes& context_probes(CUdevice device) {
  static auto* contexts = new std::map<CUcontext, ContextProbes>();  // never freed (above)
  const DriverApi& api = driver();
  CUcontext context = nullptr;
  check(api.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  auto found = contexts->find(context);
  if (found != contexts->end()) return found->second;
  ContextProbes probes;
  CUmodule module = nullptr;
  check(api.cuModuleLoadData(&module, kPtx), "cuModuleLoadData(clock probe PTX)");
  check(api.cuModuleGetFunction(&probes.busy, module, "disttune_busy"), "cuModuleGetFunction(disttune_busy)");
  check(api.cuModuleGetFunction(&probes.clock, module, "disttune_clock"), "cuModuleGetFunction(disttune_clock)");
  check(api.cuDeviceGetAttribute(&probes.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
        "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  int rated_khz = 0;
  check(api.cuDeviceGetAttribute(&rated_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device),
        "cuDeviceGetAttribute(CLOCK_RATE)");
  probes.rated_mhz = rated_khz / 1e3;
  return contexts->emplace(context, std::move(probes)).first->second;
}

}  // namespace

ClockProbe::ClockProbe(CUdevice device) {
  std::lock_guard lock(probes_mutex());
  ContextProbes& probes = context_probes(device);
  busy_ = probes.busy;
  clock_ = probes.clock;
  sm_count_ = probes.sm_count;
  rated_mhz_ = probes.rated_mhz;
  if (probes.idle_slots.empty()) {
    slots_ = std::make_unique<DeviceBuffer>(device, kMaxProbes * 2 * sizeof(std::uint64_t));
  } else {
    slots_ = std::move(probes.idle_slots.back());
    probes.idle_slots.pop_back();
  }
  idle_slots_ = &probes.idle_slots;
}

ClockProbe::~ClockProbe() {
  std::lock_guard lock(probes_mutex());
  // Never freed (see ContextProbes); slots with probes never read may still be written by
  // a stream that is stuck, so they are not handed out again.
  if (used_ == 0) {
    idle_slots_->push_back(std::move(slots_));
  } else {
    (void)slots_.release();
  }
}

void ClockProbe::keep_busy(CUstream stream, double ms) {
  std::uint64_t ns = static_cast<std::uint64_t>(std::llround(ms * 1e6));
  void* params[] = {&ns};
  check(driver().cuLaunchKernel(busy_, static_cast<unsigned>(sm_count_), 1, 1, 32, 1, 1, 0, stream,
                                params, nullptr),
        "cuLaunchKernel(disttune_busy)");
}

void ClockProbe::probe(CUstream stream) {
  if (used_ == kMaxProbes) {
    throw std::logic_error("disttune: more than " + std::to_string(kMaxProbes) +
                           " clock probes without a read()");
  }
  CUdeviceptr out = slots_->get() + used_ * 2 * sizeof(std::uint64_t);
  std::uint64_t cycles = kProbeCycles;
  void* params[] = {&out, &cycles};
  check(driver().cuLaunchKernel(clock_, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr),
        "cuLaunchKernel(disttune_clock)");
  ++used_;
}

std::vector<double> ClockProbe::read(CUstream stream) {
  std::vector<double> mhz;
  if (used_ == 0) return mhz;
  std::vector<std::uint64_t> counters(used_ * 2);
  check(driver().cuMemcpyDtoHAsync(counters.data(), slots_->get(), counters.size() * sizeof(std::uint64_t),
                                   stream),
        "cuMemcpyDtoHAsync(clock probes)");
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  for (std::size_t i = 0; i < used_; ++i) {
    const double cycles = static_cast<double>(counters[2 * i]);
    const double ns = static_cast<double>(counters[2 * i + 1]);
    mhz.push_back(ns > 0.0 ? cycles / ns * 1e3 : std::nan(""));
  }
  used_ = 0;
  return mhz;
}

double ClockProbe::settle(CUstream stream, double fraction, double awake_fraction, double cap_ms) {
  constexpr double kStepMs = 1.0;
  constexpr double kRising = 1.01;  // a step that gains less than 1% has stopped rising
  (void)read(stream);  // probes of an earlier batch are not this one's
  probe(stream);
  double mhz = read(stream).at(0);
  if (mhz >= awake_fraction * rated_mhz_) return mhz;  // running already, or held by its power limit
  for (double spent = 0.0; mhz < fraction * rated_mhz_ && spent < cap_ms; spent += kStepMs) {
    keep_busy(stream, kStepMs);
    probe(stream);
    const double before = std::exchange(mhz, read(stream).at(0));
    if (mhz >= awake_fraction * rated_mhz_ && mhz < kRising * before) break;
  }
  return mhz;
}

}  // namespace disttune::detail
