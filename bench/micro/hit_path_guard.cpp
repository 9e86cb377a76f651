// Hit-path guard (CI, CPU): a cache-hit call of a tuned function, in each of its two
// spellings, and a TunableKernel's cached launch outside a contextual run, against a direct
// call of the launcher, as a ratio; exits 1 above the limit.
//
// The launcher does a fixed chain of dependent multiply-adds (about 30-80 ns), so the ratio
// reads as 1 + hit overhead / launcher time and a slower or busier machine moves both
// sides alike. Each round times one batch of direct calls and one of each tuned spelling,
// the order rotating by round; a repeat's figure is the median of its rounds' ratios, and
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

#include "../common/hit_spellings.hpp"

namespace {

using Clock = std::chrono::steady_clock;

/// Above these the guard fails. Set from the figures of 2026-12-01 (BENCHMARKS.md, issue 25):
/// the worst best-of-7 ratio seen on a loaded 2-core machine was 1.23 for the direct spelling
/// and 1.40 for the std::function spelling.
constexpr double kDefaultMaxRatio = 1.45;             ///< the direct spelling
constexpr double kDefaultMaxRatioStdFunction = 1.6;  ///< the std::function spelling
/// A TunableKernel's cached launch outside a contextual run, looked up by key value: best-of-7
/// 1.22-1.32 in 12 runs at load 7-8 (9 of them three guards at once on the 2 cores); its old
/// path (the key's canonical text and a locked map) read 6.7-8.1 (+161 to +263 ns).
constexpr double kDefaultMaxRatioKernel = 1.8;
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

/// The key and the launcher as function objects: the direct spelling's types.
struct KeyOfSeed {
  std::tuple<long> operator()(const long& seed) const { return std::make_tuple(seed); }
};
struct LaunchChain {
  long operator()(const ChainConfig& c, long seed) const { return launch(c, seed); }
};

using Spellings = disttune::bench::HitSpellings<ChainConfig, std::tuple<long>, long(long), KeyOfSeed, LaunchChain>;
using Erased = Spellings::Erased;
using Direct = Spellings::Direct;
using Kernel = Spellings::Kernel;

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

/// One spelling's figures in one repeat.
struct Figure {
  double ratio = 0.0;      ///< median of the rounds' tuned / direct
  double direct_ns = 0.0;  ///< median per-call time of the direct batches
  double tuned_ns = 0.0;   ///< median per-call time of the tuned batches
};
struct Repeat {
  Figure direct_spelling;
  Figure erased_spelling;
  Figure kernel;
};

Repeat measure(Direct& direct, Erased& erased, Kernel& kernel, const ChainConfig& chosen, long seed) {
  constexpr int kArms = 4;  // direct call, direct spelling, std::function spelling, kernel
  std::vector<double> times[kArms], ratios[kArms];
  for (int round = 0; round < kRounds; ++round) {
    double t[kArms] = {};
    for (int k = 0; k < kArms; ++k) {
      switch (const int arm = (round + k) % kArms) {
        case 0: t[arm] = batch_ns([&] { return launch(chosen, seed); }); break;
        case 1: t[arm] = batch_ns([&] { return direct(seed); }); break;
        case 2: t[arm] = batch_ns([&] { return erased(seed); }); break;
        default: t[arm] = batch_ns([&] { return kernel(seed); }); break;
      }
    }
    for (int arm = 0; arm < kArms; ++arm) {
      times[arm].push_back(t[arm]);
      ratios[arm].push_back(t[arm] / t[0]);
    }
  }
  const double direct_ns = median(times[0]);
  return {{median(ratios[1]), direct_ns, median(times[1])},
          {median(ratios[2]), direct_ns, median(times[2])},
          {median(ratios[3]), direct_ns, median(times[3])}};
}

/// Prints the best repeat of one spelling; true if its ratio is within the limit.
bool verdict(const char* spelling, const Figure& best, double max_ratio) {
  const bool ok = best.ratio <= max_ratio;
  std::printf("hit_path_guard (C++, %s): best ratio %.3f = %.1f / %.1f ns per call (+%.1f ns), limit %.2f: %s\n",
              spelling, best.ratio, best.tuned_ns, best.direct_ns, best.tuned_ns - best.direct_ns, max_ratio,
              ok ? "ok" : "FAILED: the cache-hit path got slower against a direct call");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  double max_ratio = kDefaultMaxRatio;
  double max_ratio_std_function = kDefaultMaxRatioStdFunction;
  double max_ratio_kernel = kDefaultMaxRatioKernel;
  for (int i = 1; i < argc; i += 2) {
    const std::string option = argv[i];
    double* limit = option == "--max-ratio"                ? &max_ratio
                    : option == "--max-ratio-std-function" ? &max_ratio_std_function
                    : option == "--max-ratio-kernel"       ? &max_ratio_kernel
                                                           : nullptr;
    if (limit == nullptr || i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: hit_path_guard [--max-ratio R] [--max-ratio-std-function R] [--max-ratio-kernel R]"
                   "   (defaults %.2f, %.2f, %.2f)\n",
                   kDefaultMaxRatio, kDefaultMaxRatioStdFunction, kDefaultMaxRatioKernel);
      return 2;
    }
    char* end = nullptr;
    *limit = std::strtod(argv[i + 1], &end);
    if (end == argv[i + 1] || *end != '\0' || !(*limit > 1.0)) {
      std::fprintf(stderr, "hit_path_guard: %s needs a number above 1, got '%s'\n", option.c_str(), argv[i + 1]);
      return 2;
    }
  }
  const std::vector<ChainConfig> configs = {{1}, {2}, {3}};
  Erased erased = Spellings::erased(Spellings::spec("hit_path_guard", configs, 1, 3), KeyOfSeed{}, LaunchChain{});
  Direct direct = Spellings::direct(Spellings::spec("hit_path_guard_direct", configs, 1, 3), KeyOfSeed{}, LaunchChain{});
  Kernel kernel = Spellings::kernel("hit_path_guard_kernel", configs, 1, 3, KeyOfSeed{}, LaunchChain{});
  const long seed = 7;
  (void)erased(seed);  // tunes once; every call below is a cache hit
  (void)direct(seed);
  (void)kernel(seed);
  const ChainConfig chosen = erased.spec().configs[*erased.cached_choice(std::make_tuple(seed))];
  (void)measure(direct, erased, kernel, chosen, seed);  // warms caches and clocks; not kept
  Repeat best;
  for (int r = 0; r < kRepeats; ++r) {
    const Repeat repeat = measure(direct, erased, kernel, chosen, seed);
    std::printf("repeat %d: direct spelling ratio %.3f (%.1f ns), std::function spelling ratio %.3f (%.1f ns), "
                "TunableKernel ratio %.3f (%.1f ns); direct call %.1f ns\n",
                r, repeat.direct_spelling.ratio, repeat.direct_spelling.tuned_ns, repeat.erased_spelling.ratio,
                repeat.erased_spelling.tuned_ns, repeat.kernel.ratio, repeat.kernel.tuned_ns,
                repeat.direct_spelling.direct_ns);
    if (r == 0 || repeat.direct_spelling.ratio < best.direct_spelling.ratio) best.direct_spelling = repeat.direct_spelling;
    if (r == 0 || repeat.erased_spelling.ratio < best.erased_spelling.ratio) best.erased_spelling = repeat.erased_spelling;
    if (r == 0 || repeat.kernel.ratio < best.kernel.ratio) best.kernel = repeat.kernel;
  }
  const bool direct_ok = verdict("direct spelling", best.direct_spelling, max_ratio);
  const bool erased_ok = verdict("std::function spelling", best.erased_spelling, max_ratio_std_function);
  const bool kernel_ok = verdict("TunableKernel cached launch", best.kernel, max_ratio_kernel);
  return direct_ok && erased_ok && kernel_ok ? 0 : 1;
}
