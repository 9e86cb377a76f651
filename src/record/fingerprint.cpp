// The host's fingerprint: CPU model and core count, library version and compiler, plus
// what the timer adds about its device.
#include "disttune/fingerprint.hpp"

#include <sys/utsname.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "disttune/timer.hpp"

namespace disttune {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// The first "model name" of /proc/cpuinfo; where there is none (some ARM kernels), the
// machine name from uname, marked as such.
std::string read_cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos || !trim(line.substr(10, colon - 10)).empty()) continue;
    std::string model = trim(line.substr(colon + 1));
    if (!model.empty()) return model;
  }
  utsname machine{};
  if (uname(&machine) == 0) return std::string("unknown ") + machine.machine;
  return "unknown";
}

std::string compiler() {
#if defined(__clang__)
  return "clang " + std::to_string(__clang_major__) + "." + std::to_string(__clang_minor__) + "." +
         std::to_string(__clang_patchlevel__);
#elif defined(__GNUC__)
  return "gcc " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

// `base` with every key of `extra` set (the timer's keys win).
Value merged(Value base, const Value& extra, const char* source) {
  if (!extra.is_object()) {
    throw std::invalid_argument(std::string("disttune: Timer::") + source +
                                "() must return a JSON object, got " + extra.type_name());
  }
  base.update(extra);
  return base;
}

}  // namespace

std::string library_version() {
  return DISTTUNE_VERSION;
}

Fingerprint make_fingerprint(const Timer& timer) {
  static const std::string cpu_model = read_cpu_model();
  const Value host = {
      {"cpu", {{"model", cpu_model}, {"cores", std::thread::hardware_concurrency()}}}};
  const Value software = {{"disttune", library_version()}, {"compiler", compiler()}};
  Fingerprint fingerprint;
  fingerprint.hardware = merged(host, timer.hardware(), "hardware");
  fingerprint.deps = merged(software, timer.deps(), "deps");
  return fingerprint;
}

}  // namespace disttune
