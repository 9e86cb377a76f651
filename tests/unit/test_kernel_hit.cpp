// A TunableKernel's launches by key value where equal keys describe alike (the config the
// text lookup chose, the text built once, in and out of a run), by text otherwise; epochs; threads.
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/context.hpp"
#include "said_timer.hpp"

namespace disttune {
namespace {

using testing::SaidTimer;

std::atomic<int> shape_texts{0};  ///< how many times a Shape (or TextShape) was described

/// A key that opts in to lookups by value (below); every value hashes alike, so every
/// lookup walks past the other keys.
struct Shape {
  int m = 0;
  int n = 0;
  bool operator==(const Shape&) const = default;
};
Value describe(const Shape& shape) {
  ++shape_texts;
  return Value{{"m", shape.m}, {"n", shape.n}};
}

/// The same key without the opt-in (and with no KeyHash): its launches go by its text.
struct TextShape : Shape {};

}  // namespace

template <>
struct KeyHash<Shape> {
  std::size_t operator()(const Shape&) const { return 11; }
};
template <>
struct EqualKeysDescribeAlike<Shape> : std::true_type {};

namespace {

static_assert(EqualKeysDescribeAlike<std::tuple<int, std::string, std::vector<long>>>::value);
static_assert(EqualKeysDescribeAlike<std::pair<bool, std::array<unsigned, 3>>>::value);
static_assert(!EqualKeysDescribeAlike<double>::value);  // 0.0 == -0.0, texts differ
static_assert(!EqualKeysDescribeAlike<std::tuple<int, float>>::value);
static_assert(!EqualKeysDescribeAlike<const char*>::value);
static_assert(!EqualKeysDescribeAlike<TextShape>::value);

struct Tile {
  int id = 0;
};
Value describe(const Tile& tile) { return Value{{"tile", tile.id}}; }

/// The tile a shape runs fastest in (the cost model of these tests).
int best_tile(const Shape& shape) { return (shape.m + shape.n) % 3; }
int best_tile(double) { return 0; }

template <class Key>
using Kernel = TunableKernel<Tile, Key, int(Key)>;

/// A kernel over tiles 0, 1, 2 whose launch returns the tile it ran. With a timer, each run
/// says its cost (1 ms for the shape's best tile, else 2 ms and more) and counts itself in
/// `runs`; without one the launcher touches nothing shared (for launches from threads).
template <class Key>
Kernel<Key> make_kernel(std::shared_ptr<SaidTimer> timer, std::shared_ptr<std::atomic<int>> runs = nullptr) {
  typename Kernel<Key>::Spec spec;
  spec.name = "tiles";
  spec.configs = {{0}, {1}, {2}};
  spec.key = [](const Key& key) { return key; };
  spec.launch = [timer, runs](const Tile& tile, Key key) {
    if (timer) timer->said_ms = tile.id == best_tile(key) ? 1.0 : 2.0 + tile.id;
    if (runs) ++*runs;
    return tile.id;
  };
  spec.isolated.timer = timer;
  spec.isolated.measurement.strategy = "exhaustive";
  spec.isolated.measurement.warmup_runs = 1;
  spec.isolated.measurement.timed_runs = 2;
  return Kernel<Key>(std::move(spec));
}

/// Launcher runs of one isolated tuning of three tiles (1 + 2 each), then the best once.
constexpr int kTuningRuns = 3 * 3 + 1;

std::string text_of(const Shape& shape) { return canonical_json(describe(shape)); }

const std::vector<Shape> kShapes = {{1, 1}, {1, 2}, {2, 2}, {5, 0}, {0, 0}};

TEST(KernelHit, AHitByValueRunsTheConfigTheTextLookupChoseAndBuildsNoText) {
  auto by_value = make_kernel<Shape>(std::make_shared<SaidTimer>());
  auto by_text = make_kernel<TextShape>(std::make_shared<SaidTimer>());
  for (const Shape& shape : kShapes) {
    EXPECT_EQ(by_value(shape), best_tile(shape));  // tunes
    EXPECT_EQ(by_text(TextShape{shape}), best_tile(shape));
  }
  std::vector<std::size_t> chosen_by_text;
  for (const Shape& shape : kShapes) chosen_by_text.push_back(*by_value.state().cached_index(text_of(shape), by_value.candidates()));

  shape_texts = 0;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t k = 0; k < kShapes.size(); ++k) {
      EXPECT_EQ(by_value(kShapes[k]), static_cast<int>(chosen_by_text[k])) << k;
    }
  }
  EXPECT_EQ(shape_texts, 0);  // every launch after the first of each key was a hit by value

  for (std::size_t k = 0; k < kShapes.size(); ++k) {
    EXPECT_EQ(by_text(TextShape{kShapes[k]}), static_cast<int>(chosen_by_text[k])) << k;
  }
  EXPECT_EQ(shape_texts, static_cast<int>(kShapes.size()));  // one text per launch by text
}

TEST(KernelHit, ANewKeyStillTunesAfterHitsOfAnother) {
  auto runs = std::make_shared<std::atomic<int>>(0);
  auto kernel = make_kernel<Shape>(std::make_shared<SaidTimer>(), runs);
  EXPECT_EQ(kernel({1, 1}), 2);
  EXPECT_EQ(*runs, kTuningRuns);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(kernel({1, 1}), 2);
  EXPECT_EQ(*runs, kTuningRuns + 4);

  *runs = 0;
  EXPECT_EQ(kernel({2, 2}), 1);
  EXPECT_EQ(*runs, kTuningRuns);
  EXPECT_EQ(kernel.last_tuning()->key, text_of({2, 2}));
  EXPECT_EQ(kernel({2, 2}), 1);
  EXPECT_EQ(kernel({1, 1}), 2);
  EXPECT_EQ(*runs, kTuningRuns + 2);
}

TEST(KernelHit, AReplacedOrClearedChoiceIsSeenByTheNextLaunch) {
  auto runs = std::make_shared<std::atomic<int>>(0);
  auto kernel = make_kernel<Shape>(std::make_shared<SaidTimer>(), runs);
  EXPECT_EQ(kernel({1, 1}), 2);
  EXPECT_EQ(kernel({1, 1}), 2);
  KernelTuningState& state = kernel.state();

  // A choice for a new key leaves the epoch, so the hits of the other keys stay hits.
  const std::uint64_t epoch = state.epoch();
  state.remember(KernelChoice{text_of({4, 4}), 0, kernel.candidates()[0], {}});
  EXPECT_EQ(state.epoch(), epoch);
  shape_texts = 0;
  EXPECT_EQ(kernel({1, 1}), 2);
  EXPECT_EQ(shape_texts, 0);
  EXPECT_EQ(kernel({4, 4}), 0);  // from the state, not tuned

  // Replacing a cached choice moves the epoch: the next launch reads the new one.
  state.remember(KernelChoice{text_of({1, 1}), 0, kernel.candidates()[0], {}});
  EXPECT_GT(state.epoch(), epoch);
  *runs = 0;
  EXPECT_EQ(kernel({1, 1}), 0);
  EXPECT_EQ(kernel({1, 1}), 0);
  EXPECT_EQ(*runs, 2);  // no tuning

  // Emptying the cache does too: the key is tuned again.
  const std::uint64_t before_clear = state.epoch();
  state.clear();
  EXPECT_GT(state.epoch(), before_clear);
  *runs = 0;
  EXPECT_EQ(kernel({1, 1}), 2);
  EXPECT_EQ(*runs, kTuningRuns);
}

/// Tunes `kernel` for `shape` in a contextual run whose outer function launches it twice;
/// returns the outer runs and counts the launcher's runs in `runs`.
template <class Key>
int tune_in_a_run(Kernel<Key>& kernel, const std::shared_ptr<SaidTimer>& timer, const Key& shape) {
  const std::filesystem::path log_dir =
      std::filesystem::temp_directory_path() / ("disttune-kernel-hit-" + std::to_string(::getpid()));
  ContextOptions options;
  options.n_warmup = 1;
  options.n_repeat = 1;
  options.timer = timer;
  options.log_dir = log_dir;
  auto outer = make_contextual(
      "outer",
      [&](const Key& key) {
        const int tile = kernel(key);
        EXPECT_EQ(kernel(key), tile);  // a later launch in one outer run: the same candidate
        return tile;
      },
      options);
  EXPECT_EQ(outer(shape), 1);
  std::filesystem::remove_all(log_dir);
  return outer.tuner().outer_runs();
}

TEST(KernelHit, ARunBuildsAKeysTextOnceAndItsChoiceIsHitByValueAfterIt) {
  auto timer = std::make_shared<SaidTimer>();
  auto runs = std::make_shared<std::atomic<int>>(0);
  auto kernel = make_kernel<Shape>(timer, runs);
  shape_texts = 0;
  // 3 tiles x (1 warm-up + 1 timed) outer runs and the final one, 2 launches each: one text.
  EXPECT_EQ(tune_in_a_run(kernel, timer, Shape{2, 2}), 7);
  EXPECT_EQ(*runs, 14);
  EXPECT_EQ(shape_texts, 1);

  *runs = 0;
  EXPECT_EQ(kernel({2, 2}), 1);  // the run's choice, from the state, not tuned
  EXPECT_EQ(kernel({2, 2}), 1);
  EXPECT_EQ(*runs, 2);
  EXPECT_EQ(shape_texts, 1);
}

TEST(KernelHit, AKeyWithoutTheOptInTunesAlikeInARunByItsText) {
  auto timer = std::make_shared<SaidTimer>();
  auto runs = std::make_shared<std::atomic<int>>(0);
  auto kernel = make_kernel<TextShape>(timer, runs);
  shape_texts = 0;
  EXPECT_EQ(tune_in_a_run(kernel, timer, TextShape{{2, 2}}), 7);
  EXPECT_EQ(*runs, 14);
  EXPECT_EQ(shape_texts, 14);  // one text per launch
  EXPECT_EQ(kernel(TextShape{{2, 2}}), 1);
}

TEST(KernelHit, ConcurrentLaunchesRunTheCachedChoiceAndSeeAReplacement) {
  auto kernel = make_kernel<Shape>(nullptr);  // a launcher with nothing shared
  std::vector<Shape> shapes;
  for (int m = 0; m < 12; ++m) shapes.push_back({m, 1});
  const auto remember_all = [&](int shift) {
    for (const Shape& shape : shapes) {
      const int tile = (best_tile(shape) + shift) % 3;
      kernel.state().remember(KernelChoice{text_of(shape), static_cast<std::size_t>(tile),
                                           kernel.candidates()[tile], {}});
    }
  };
  // Launches from 4 threads; each thread counts the launches that ran neither `shift` of
  // the shape's choice nor `other_shift` (where a replacement may be under way).
  const auto launch_from_threads = [&](int shift, int other_shift, const std::function<void()>& meanwhile) {
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < 300; ++round) {
          const Shape& shape = shapes[(round + t) % shapes.size()];
          const int tile = kernel(shape);
          if (tile != (best_tile(shape) + shift) % 3 && tile != (best_tile(shape) + other_shift) % 3) ++wrong;
        }
      });
    }
    meanwhile();
    for (std::thread& thread : threads) thread.join();
    return wrong.load();
  };

  remember_all(0);
  // Every first launch of a key misses the snapshot at once and publishes one of its own.
  EXPECT_EQ(launch_from_threads(0, 0, [] {}), 0);
  // A replacement while the threads launch: each launch runs the old or the new choice.
  EXPECT_EQ(launch_from_threads(0, 1, [&] { remember_all(1); }), 0);
  // After it, only the new one.
  EXPECT_EQ(launch_from_threads(1, 1, [] {}), 0);
}

TEST(KernelHit, FloatingPointKeysGoByTheirText) {
  // 0.0 == -0.0, but their texts (the cache's keys) differ, and so may their choices.
  auto kernel = make_kernel<double>(nullptr);
  ASSERT_NE(canonical_json(disttune::describe(0.0)), canonical_json(disttune::describe(-0.0)));
  kernel.state().remember(KernelChoice{canonical_json(disttune::describe(0.0)), 0, kernel.candidates()[0], {}});
  kernel.state().remember(KernelChoice{canonical_json(disttune::describe(-0.0)), 2, kernel.candidates()[2], {}});
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(kernel(0.0), 0);
    EXPECT_EQ(kernel(-0.0), 2);
  }
}

}  // namespace
}  // namespace disttune
