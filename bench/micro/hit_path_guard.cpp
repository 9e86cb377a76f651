// Hit-path guard (CI, CPU): a cache-hit call of a tuned function against a direct call of
// its launcher, as a ratio; exits 1 above the stated ratio.
//
// The launcher does a fixed chain of dependent multiply-adds (about 60-80 ns), so the ratio
// reads as 1 + hit overhead / launcher time and a slower or busier machine moves both
// sides alike. Each round times one batch of direct calls and one of tuned calls, the
// order alternating by round; a repeat's figure is the median of its rounds' ratios, and
// the guard takes the best (lowest) of several repeats: a neighbour's burst on a shared
// 2-core machine raises some repeats, not all of them.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "disttune/autotune.hpp"

namespace {

using Clock = std::chrono::steady_clock;

/// Above this the guard fails. Set from the figures of 2026-12-01 (BENCHMARKS.md, issue 25).
constexpr double kDefaultMaxRatio = 1.6;
constexpr int kRounds = 1000;
constexpr int kBatch = 200;
constexpr int kRepeats = 7;
/// Dependent multiply-adds per launch: the launcher's fixed work.
constexpr int kChain = 64;

struct ChainConfig {
  int factor = 1;
};
disttune::Value describe(const ChainConfig& c) { return {{"factor", c.factor}}; }

/// The launcher: a latency-bound chain the compiler cannot fold (kept out of line, as a
/// real launcher in another translation unit would be).
[[gnu::noinline]] long launch(const ChainConfig& c, long seed) {
  long value = seed;
  for (int i = 0; i < kChain; ++i) {
    benchmark::DoNotOptimize(value);
    value = value * 3 + c.factor;
  }
  return value;
}

using Tuned = disttune::Autotuned<ChainConfig, std::tuple<long>, long(long)>;

Tuned make_tuned() {
  Tuned::Spec spec;
  spec.identity = {"hit_path_guard", "v1"};
  spec.configs = {{1}, {2}, {3}};
  spec.key = [](const long& seed) { return std::make_tuple(seed); };
  spec.launch = launch;
  spec.options.disk_cache = false;
  spec.options.measurement.strategy = "exhaustive";
  spec.options.measurement.warmup_runs = 1;
  spec.options.measurement.timed_runs = 3;
  return Tuned(std::move(spec));
}

template <class Call>
double batch_ns(Call&& call) {
  const Clock::time_point begin = Clock::now();
  for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(call());
  return std::chrono::duration<double, std::nano>(Clock::now() - begin).count() / kBatch;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Repeat {
  double ratio = 0.0;      ///< median of the rounds' tuned / direct
  double direct_ns = 0.0;  ///< median per-call time of the direct batches
  double tuned_ns = 0.0;   ///< median per-call time of the tuned batches
};

Repeat measure(Tuned& tuned, const ChainConfig& chosen, long seed) {
  std::vector<double> ratios, direct, via_tuned;
  auto direct_call = [&] { return launch(chosen, seed); };
  auto tuned_call = [&] { return tuned(seed); };
  for (int round = 0; round < kRounds; ++round) {
    double d = 0.0, t = 0.0;
    if (round % 2 == 0) {
      d = batch_ns(direct_call);
      t = batch_ns(tuned_call);
    } else {
      t = batch_ns(tuned_call);
      d = batch_ns(direct_call);
    }
    ratios.push_back(t / d);
    direct.push_back(d);
    via_tuned.push_back(t);
  }
  return {median(ratios), median(direct), median(via_tuned)};
}

}  // namespace

int main(int argc, char** argv) {
  double max_ratio = kDefaultMaxRatio;
  if (argc == 3 && std::string(argv[1]) == "--max-ratio") {
    char* end = nullptr;
    max_ratio = std::strtod(argv[2], &end);
    if (end == argv[2] || *end != '\0' || !(max_ratio > 1.0)) {
      std::fprintf(stderr, "hit_path_guard: --max-ratio needs a number above 1, got '%s'\n", argv[2]);
      return 2;
    }
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: hit_path_guard [--max-ratio R]   (default %.2f)\n", kDefaultMaxRatio);
    return 2;
  }
  Tuned tuned = make_tuned();
  const long seed = 7;
  (void)tuned(seed);  // tunes once; every call below is a cache hit
  const ChainConfig chosen = tuned.spec().configs[*tuned.cached_choice(std::make_tuple(seed))];
  (void)measure(tuned, chosen, seed);  // warms caches and clocks; not kept
  Repeat best;
  for (int r = 0; r < kRepeats; ++r) {
    const Repeat repeat = measure(tuned, chosen, seed);
    std::printf("repeat %d: ratio %.3f (direct %.1f ns, tuned %.1f ns per call)\n", r, repeat.ratio,
                repeat.direct_ns, repeat.tuned_ns);
    if (r == 0 || repeat.ratio < best.ratio) best = repeat;
  }
  const bool ok = best.ratio <= max_ratio;
  std::printf("hit_path_guard (C++): best ratio %.3f = %.1f / %.1f ns per call (+%.1f ns), limit %.2f: %s\n",
              best.ratio, best.tuned_ns, best.direct_ns, best.tuned_ns - best.direct_ns, max_ratio,
              ok ? "ok" : "FAILED: the cache-hit path got slower against a direct call");
  return ok ? 0 : 1;
}
