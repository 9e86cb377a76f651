// Fingerprints: the hardware a result was measured on and the software it depends on.
#pragma once

#include <string>

#include "disttune/config.hpp"

namespace disttune {

class Timer;

/// What a stored result depends on. A record is only found for the same hardware digest;
/// deps are compared on load (a mismatch warns, or re-tunes with
/// TRITON_DIST_AUTOTUNE_VERSION_CHECK=1).
struct Fingerprint {
  Value hardware = Value::object();  ///< e.g. {"cpu": {"model": ..., "cores": 8}, "cuda": {...}}
  Value deps = Value::object();      ///< e.g. {"disttune": "0.1.0", "compiler": "gcc 12.2.0", ...}
  std::string hardware_digest() const { return digest(hardware); }
  std::string deps_digest() const { return digest(deps); }
};

/// The host's fingerprint (CPU model and core count; library version and compiler), with
/// the timer's device facts merged in under their own keys.
Fingerprint make_fingerprint(const Timer& timer);

/// The library version, "MAJOR.MINOR.PATCH".
std::string library_version();

}  // namespace disttune
