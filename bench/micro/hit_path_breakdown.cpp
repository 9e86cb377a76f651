// Where a C++ cache hit's time goes on the CPU: paired arms (direct call, the tuned call in
// both spellings, lookup + direct call, each std::function hop alone; then a TunableKernel's
// cached launch and its parts), as gemm_bench does on a GPU, but with an out-of-line CPU launcher.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "../common/hit_spellings.hpp"
#include "../common/paired_arms.hpp"
#include "disttune/autotune.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct TileConfig {
  int tile = 1;
};
disttune::Value describe(const TileConfig& c) { return {{"tile", c.tile}}; }

struct Shape {
  int m = 0, n = 0, k = 0;
};

volatile int sink = 0;  ///< what the launcher writes, so no arm is optimised away

/// The launcher: out of line, as a real launcher (a CUDA launch, a library call) would be;
/// it only touches its arguments, so an arm's time is call overhead.
[[gnu::noinline]] void launch(const TileConfig& c, const float* x, float* y, Shape s) {
  sink = c.tile + s.m + static_cast<int>(x != y);
}

using Key = std::tuple<int, int, int>;
using Signature = void(const float*, float*, Shape);

/// The key and the launcher as named function objects (the direct spelling's types).
struct KeyOfShape {
  Key operator()(const float* const&, float* const&, const Shape& s) const { return {s.m, s.n, s.k}; }
};
struct LaunchTile {
  void operator()(const TileConfig& c, const float* x, float* y, Shape s) const { launch(c, x, y, s); }
};

using Spellings = disttune::bench::HitSpellings<TileConfig, Key, Signature, KeyOfShape, LaunchTile>;
/// `repeats` lines of paired figures for the arms `names`, each timed by `time_arm(arm)`.
template <class TimeArm>
void print_repeats(const std::vector<std::string>& names, int repeats, int rounds, int warmup_rounds, int batch,
                   TimeArm&& time_arm) {
  for (int r = 0; r < repeats; ++r) {
    const disttune::bench::PairedFigures figures =
        disttune::bench::paired_arms(names, rounds, warmup_rounds, batch, time_arm);
    std::printf("repeat %d:", r);
    for (const disttune::bench::ArmFigure& arm : figures.arms) {
      std::printf("  | %s %.2f", arm.arm.c_str(), arm.per_call_ns);
      if (&arm != &figures.arms.front()) std::printf(" (%+.2f [%+.2f, %+.2f])", arm.overhead_ns, arm.ci_low_ns, arm.ci_high_ns);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  if (argc == 2) repeats = std::atoi(argv[1]);
  if (argc > 2 || repeats < 1) {
    std::fprintf(stderr, "usage: hit_path_breakdown [REPEATS]   (default 5)\n");
    return 2;
  }
  constexpr int kBatch = 1000;  // a batch spans many ticks of the clock
  constexpr int kRounds = 2000;
  float x[4] = {}, y[4] = {};
  const Shape shape{256, 256, 256};
  const Key key{shape.m, shape.n, shape.k};
  const std::vector<TileConfig> configs = {{1}, {2}, {4}, {8}};
  auto erased = Spellings::erased(Spellings::spec("hit_path_breakdown", configs, 0, 1), KeyOfShape{}, LaunchTile{});
  auto direct = Spellings::direct(Spellings::spec("hit_path_breakdown_direct", configs, 0, 1), KeyOfShape{}, LaunchTile{});
  erased(x, y, shape);  // tunes once (CPU clock); every call below is a hit
  direct(x, y, shape);
  const TileConfig chosen = erased.spec().configs[*erased.cached_choice(key)];
  const std::vector<TileConfig>& space = erased.spec().configs;
  const auto& launch_hop = erased.spec().launch;
  const auto& key_hop = erased.spec().key;
  const auto time_batch = [&](auto&& call) {
    const Clock::time_point begin = Clock::now();
    for (int i = 0; i < kBatch; ++i) call();
    return std::chrono::duration<double, std::nano>(Clock::now() - begin).count() / kBatch;
  };
  const std::vector<std::string> names = {"direct",        "tuned, std::function spelling", "tuned, direct spelling",
                                          "lookup+direct", "launch std::function alone",    "key std::function + direct"};
  std::printf("hit_path_breakdown: %d repeats of %d paired rounds of %d calls per arm; ns per call, "
              "minus direct: median [95%% CI]\n",
              repeats, kRounds, kBatch);
  print_repeats(names, repeats, kRounds, 100, kBatch, [&](std::size_t arm) {
    switch (arm) {
      case 0: return time_batch([&] { launch(chosen, x, y, shape); });
      case 1: return time_batch([&] { erased(x, y, shape); });
      case 2: return time_batch([&] { direct(x, y, shape); });
      case 3:
        return time_batch([&] {
          const Key k = KeyOfShape{}(x, y, shape);
          launch(space[*erased.cached_choice(k)], x, y, shape);
        });
      case 4: return time_batch([&] { launch_hop(chosen, x, y, shape); });
      default:
        return time_batch([&] {
          Key k = key_hop(x, y, shape);
          benchmark::DoNotOptimize(k);
          launch(chosen, x, y, shape);
        });
    }
  });

  // A TunableKernel's cached launch outside a contextual run, and the parts a hit may take:
  // its two std::function hops, the check for an active run, the key's canonical text, the
  // lookup of that text in the kernel's state.
  auto kernel = Spellings::kernel("hit_path_breakdown_kernel", configs, 0, 1, KeyOfShape{}, LaunchTile{});
  kernel(x, y, shape);  // tunes once in isolation; every call below is a cached launch
  const TileConfig kernel_chosen = *kernel.cached_config(key);
  const auto& kernel_key = kernel.spec().key;
  const auto& kernel_launch = kernel.spec().launch;
  const std::vector<std::string> kernel_names = {"direct", "kernel cached launch", "key+launch std::functions",
                                                 "hops+active()", "hops+key text", "hops+key text+state lookup"};
  constexpr int kKernelRounds = 500;
  std::printf("TunableKernel (outside a run): %d repeats of %d paired rounds of %d calls per arm\n", repeats,
              kKernelRounds, kBatch);
  print_repeats(kernel_names, repeats, kKernelRounds, 20, kBatch, [&](std::size_t arm) {
    switch (arm) {
      case 0: return time_batch([&] { launch(kernel_chosen, x, y, shape); });
      case 1: return time_batch([&] { kernel(x, y, shape); });
      case 2: return time_batch([&] { kernel_launch(kernel_chosen, x, y, shape); benchmark::DoNotOptimize(kernel_key(x, y, shape)); });
      case 3:
        return time_batch([&] {
          benchmark::DoNotOptimize(kernel_key(x, y, shape));
          benchmark::DoNotOptimize(disttune::ContextualAutotuner::active());
          kernel_launch(kernel_chosen, x, y, shape);
        });
      case 4:
        return time_batch([&] {
          const std::string text = disttune::canonical_json(disttune::describe(kernel_key(x, y, shape)));
          benchmark::DoNotOptimize(text.data());
          kernel_launch(kernel_chosen, x, y, shape);
        });
      default:
        return time_batch([&] {
          const std::string text = disttune::canonical_json(disttune::describe(kernel_key(x, y, shape)));
          kernel_launch(kernel.spec().configs[*kernel.state().cached_index(text, kernel.candidates())], x, y,
                        shape);
        });
    }
  });
  return 0;
}
