// Cache-hit calls (both Autotuned spellings, a TunableKernel, a tuned Contextual) against a direct call of the launcher.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "disttune/autotune.hpp"
#include "disttune/context.hpp"

namespace {

struct AxpyConfig {
  int unroll = 1;
};
disttune::Value describe(const AxpyConfig& c) { return {{"unroll", c.unroll}}; }

/// A tiny launcher: the work is a few adds, so the measured time is the call overhead.
int launch(const AxpyConfig& c, int n, int m) {
  benchmark::DoNotOptimize(n);
  return n * c.unroll + m;
}

using Tuned = disttune::Autotuned<AxpyConfig, std::tuple<int, int>, int(int, int)>;

std::tuple<int, int> key_of(const int& n, const int& m) { return std::make_tuple(n, m); }

Tuned::Spec spec_without_functions() {
  Tuned::Spec spec;
  spec.identity = {"bench_cache_hit", "v1"};
  spec.configs = {{1}, {2}, {4}};
  spec.options.disk_cache = false;
  spec.options.measurement.warmup_runs = 1;
  spec.options.measurement.timed_runs = 3;
  return spec;
}

/// The std::function spelling.
Tuned make_tuned() {
  Tuned::Spec spec = spec_without_functions();
  spec.key = key_of;
  spec.launch = launch;
  return Tuned(std::move(spec));
}

/// The direct spelling: lambdas, called directly on a hit.
auto make_direct() {
  return disttune::Autotuned(
      spec_without_functions(), [](const int& n, const int& m) { return key_of(n, m); },
      [](const AxpyConfig& c, int n, int m) { return launch(c, n, m); });
}

void direct_call(benchmark::State& state) {
  const AxpyConfig config{2};
  int n = 1024;
  for (auto _ : state) benchmark::DoNotOptimize(launch(config, n, 3));
}

void cache_hit_call(benchmark::State& state) {
  Tuned tuned = make_tuned();
  int n = 1024;
  tuned(n, 3);  // tunes once; every call below is a hit
  for (auto _ : state) benchmark::DoNotOptimize(tuned(n, 3));
}

void cache_hit_call_direct_spelling(benchmark::State& state) {
  auto tuned = make_direct();
  int n = 1024;
  tuned(n, 3);
  for (auto _ : state) benchmark::DoNotOptimize(tuned(n, 3));
}

using Kernel = disttune::TunableKernel<AxpyConfig, std::tuple<int, int>, int(int, int)>;

Kernel make_kernel(const std::string& name) {
  Kernel::Spec spec;
  spec.name = name;
  spec.configs = {{1}, {2}, {4}};
  spec.key = key_of;
  spec.launch = launch;
  spec.isolated.measurement.warmup_runs = 1;
  spec.isolated.measurement.timed_runs = 3;
  return Kernel(std::move(spec));
}

/// A TunableKernel's cached launch outside a contextual run: a std::tuple<int, int> key is
/// looked up by value (EqualKeysDescribeAlike), its canonical text built only once.
void tunable_kernel_hit_call(benchmark::State& state) {
  Kernel kernel = make_kernel("bench_tunable_kernel_hit");
  int n = 1024;
  kernel(n, 3);
  for (auto _ : state) benchmark::DoNotOptimize(kernel(n, 3));
}

/// A tuned Contextual whose outer function launches a cached kernel `state.range(0)` times:
/// every call is one outer run (the final one) through the contextual tuner. Time per call;
/// `per_launch` divides it by the launches.
void contextual_call_cached(benchmark::State& state) {
  Kernel kernel = make_kernel("bench_contextual_kernel");
  const std::int64_t launches = state.range(0);
  disttune::ContextOptions options;
  options.n_warmup = 1;
  options.n_repeat = 1;
  options.log_dir = std::filesystem::temp_directory_path() / "disttune-bench-contextual";
  auto outer = disttune::make_contextual("bench_outer", [&](int n) {
    int sum = 0;
    for (std::int64_t i = 0; i < launches; ++i) sum += kernel(n, 3);
    return sum;
  }, options);
  int n = 1024;
  outer(n);  // tunes; every call below is one final outer run
  for (auto _ : state) benchmark::DoNotOptimize(outer(n));
  state.counters["per_launch"] = benchmark::Counter(static_cast<double>(state.iterations() * launches),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  std::filesystem::remove_all(options.log_dir);
}

/// Hits while the cache holds many keys (the snapshot map, not a single entry).
void cache_hit_call_64_keys(benchmark::State& state) {
  Tuned tuned = make_tuned();
  for (int n = 0; n < 64; ++n) tuned(n, 3);
  int n = 17;
  for (auto _ : state) benchmark::DoNotOptimize(tuned(n, 3));
}

BENCHMARK(direct_call);
BENCHMARK(cache_hit_call);
BENCHMARK(cache_hit_call_direct_spelling);
BENCHMARK(cache_hit_call_64_keys);
BENCHMARK(tunable_kernel_hit_call);
BENCHMARK(contextual_call_cached)->Arg(1)->Arg(1000)->Iterations(2000);

}  // namespace

BENCHMARK_MAIN();
