// Both spellings of one tuned function (the Spec's std::functions, the direct one), and a
// TunableKernel over the same key function and launcher, for the hit-path benchmarks.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "disttune/autotune.hpp"
#include "disttune/context.hpp"

namespace disttune::bench {

template <class Config, class Key, class Signature, class KeyOf, class Launch>
struct HitSpellings;

/// `Erased` keeps the key function and the launcher in the Spec's std::functions, `Direct`
/// keeps their own types: the same two objects, only the calls differ.
template <class Config, class Key, class Result, class... Args, class KeyOf, class Launch>
struct HitSpellings<Config, Key, Result(Args...), KeyOf, Launch> {
  using Erased = Autotuned<Config, Key, Result(Args...)>;
  using Direct = Autotuned<Config, Key, Result(Args...), KeyOf, Launch>;
  using Spec = typename Erased::Spec;
  using Kernel = TunableKernel<Config, Key, Result(Args...)>;

  /// A spec without key and launch: no disk cache, the exhaustive strategy, these run counts.
  static Spec spec(const std::string& name, std::vector<Config> configs, int warmup_runs, int timed_runs) {
    Spec spec;
    spec.identity = {name, "v1"};
    spec.configs = std::move(configs);
    spec.options.disk_cache = false;
    spec.options.measurement.strategy = "exhaustive";
    spec.options.measurement.warmup_runs = warmup_runs;
    spec.options.measurement.timed_runs = timed_runs;
    return spec;
  }
  static Erased erased(Spec spec, KeyOf key, Launch launch) {
    spec.key = std::move(key);
    spec.launch = std::move(launch);
    return Erased(std::move(spec));
  }
  static Direct direct(Spec spec, KeyOf key, Launch launch) {
    return Direct(std::move(spec), std::move(key), std::move(launch));
  }
  /// A TunableKernel over the same objects (in its Spec's std::functions), tuned in isolation
  /// on the CPU clock with the exhaustive strategy and these run counts.
  static Kernel kernel(const std::string& name, std::vector<Config> configs, int warmup_runs, int timed_runs,
                       KeyOf key, Launch launch) {
    typename Kernel::Spec spec;
    spec.name = name;
    spec.configs = std::move(configs);
    spec.key = std::move(key);
    spec.launch = std::move(launch);
    spec.isolated.measurement.strategy = "exhaustive";
    spec.isolated.measurement.warmup_runs = warmup_runs;
    spec.isolated.measurement.timed_runs = timed_runs;
    return Kernel(std::move(spec));
  }
};

}  // namespace disttune::bench
