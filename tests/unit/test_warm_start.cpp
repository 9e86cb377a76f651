// Warm start through FunctionTuner: neighbours' records order a new key's candidates, the
// probe climbs from the fastest to the key's best, the ranks agree, the record says so; and
// what the strategy names ahead of its probe.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/context.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/store.hpp"
#include "disttune/strategy.hpp"
#include "disttune/warm_start.hpp"
#include "said_timer.hpp"
#include "store_test_support.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::SaidTimer;
using testing::ScopedEnv;
using testing::TempDir;

constexpr std::size_t kSpace = 40;

std::vector<std::string> space() {
  std::vector<std::string> list;
  for (std::size_t i = 0; i < kSpace; ++i) list.push_back("{\"tile\":" + std::to_string(i) + "}");
  return list;
}

/// The cost model: for key [m], the best tile is `best_tile(m)` (the same for 1024 and 2048,
/// another for larger and for smaller sizes) and each step away costs 0.1 ms.
std::size_t best_tile(int m) { return m < 1024 ? 2 : (m <= 2048 ? 20 : 30); }
double cost_ms(std::size_t tile, int m) {
  const std::size_t best = best_tile(m);
  return 1.0 + 0.1 * static_cast<double>(tile > best ? tile - best : best - tile);
}

/// A tuner on `root` (exhaustive, so the runs counted below are its), recording which
/// candidates ran.
struct Tuned {
  explicit Tuned(const fs::path& root, std::shared_ptr<Communicator> comm = nullptr)
      : timer(std::make_shared<SaidTimer>()), tuner({"matmul", "v1"}, options(root, timer, std::move(comm))) {}

  static TunerOptions options(const fs::path& root, std::shared_ptr<SaidTimer> timer,
                              std::shared_ptr<Communicator> comm) {
    TunerOptions options;
    options.measurement.strategy = "exhaustive";
    options.measurement.warmup_runs = 1;
    options.measurement.timed_runs = 3;
    options.timer = std::move(timer);
    options.communicator = std::move(comm);
    options.cache_root = root;
    options.shared_store = "";  // the directory alone, whatever the environment says
    return options;
  }

  TuningReport resolve(int m, std::vector<std::string> candidates = space()) {
    ran.clear();
    TuningRequest request;
    request.key = "[" + std::to_string(m) + ",4096]";
    request.candidates = std::move(candidates);
    request.run = [this, m](std::size_t i) {
      ran.insert(i);
      timer->said_ms = cost_ms(i, m);
    };
    return tuner.resolve(request);
  }

  std::shared_ptr<SaidTimer> timer;
  FunctionTuner tuner;
  std::set<std::size_t> ran;
};

TEST(KeyDistance, SizesCompareByLog2AndOtherPartsByEquality) {
  EXPECT_DOUBLE_EQ(default_key_distance("[1024,4096]", "[2048,4096]"), 1.0);
  EXPECT_DOUBLE_EQ(default_key_distance("[16,4096]", "[8192,4096]"), 9.0);
  EXPECT_DOUBLE_EQ(default_key_distance(R"({"m":64,"dtype":"fp16"})", R"({"dtype":"fp16","m":16})"), 2.0);
  EXPECT_DOUBLE_EQ(default_key_distance(R"([64,"fp16"])", R"([64,"bf16"])"), kKeyPartsDiffer);
  EXPECT_DOUBLE_EQ(default_key_distance("[1,2]", "[1,2,3]"), kKeyPartsDiffer);
  EXPECT_DOUBLE_EQ(default_key_distance("[0]", "[0]"), 0.0);
  EXPECT_DOUBLE_EQ(default_key_distance("not json", "not json"), 0.0);
  EXPECT_DOUBLE_EQ(default_key_distance("not json", "[1]"), kKeyPartsDiffer);
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_DOUBLE_EQ(default_key_distance(deep, "[1]"), kKeyPartsDiffer);  // bounded, no crash
}

TEST(WarmStart, ANeighboursBestIsConfirmedWithoutRunningTheWholeSpace) {
  TempDir root;
  Tuned tuned(root.path());
  const TuningReport first = tuned.resolve(1024);
  EXPECT_EQ(tuned.ran.size(), kSpace);  // nothing to start from: the full space
  EXPECT_TRUE(first.warm_start_from.empty());
  EXPECT_EQ(first.best, best_tile(1024));

  // The prior's first 4, the first's 2 neighbours (tiles 19 and 21, among those 4 here), 4
  // sampled tiles; the 3 fastest (20, 19, 21) have no unmeasured neighbour: no climb round.
  const TuningReport second = tuned.resolve(2048);
  EXPECT_EQ(second.best, best_tile(2048));  // the exhaustive best of this key
  EXPECT_EQ(tuned.ran.size(), kWarmStartTop + kWarmStartSample);
  EXPECT_EQ(second.warm_start_from, std::vector<std::string>{"[1024,4096]"});
  std::size_t skipped = 0;
  for (const CandidateResult& result : second.candidates) skipped += result.measured ? 0 : 1;
  EXPECT_EQ(skipped, kSpace - tuned.ran.size());

  ASSERT_TRUE(second.record_path);
  const RecordRead read = read_record(*second.record_path);
  ASSERT_TRUE(read.record) << read.error;
  ASSERT_TRUE(read.record->warm_start);
  EXPECT_EQ(read.record->warm_start->from_keys, std::vector<std::string>{"[1024,4096]"});
  EXPECT_EQ(read.record->warm_start->prior.front(), best_tile(1024));

  // The next key starts from both, nearest first; a hit reports where its tuning started.
  const TuningReport third = tuned.resolve(4096);
  EXPECT_EQ(third.warm_start_from, (std::vector<std::string>{"[2048,4096]", "[1024,4096]"}));
  EXPECT_EQ(source_name(tuned.resolve(2048)), "disk");
  EXPECT_TRUE(tuned.ran.empty());
}

TEST(WarmStart, APriorFarFromTheKeysBestClimbsToItFromTheFastestProbed) {
  TempDir root;
  Tuned tuned(root.path());
  tuned.resolve(1024);
  // Tile 2 is best for [16]; the prior's tiles (around 20) are not. The seed-0 sample holds
  // tile 0, the fastest probed; the climb goes 0 -> 1 -> 2 and stops when 3 is slower.
  const TuningReport small = tuned.resolve(16);
  EXPECT_EQ(small.best, best_tile(16));
  EXPECT_EQ(small.warm_start_from, std::vector<std::string>{"[1024,4096]"});
  EXPECT_TRUE(tuned.ran.count(0) && tuned.ran.count(1) && tuned.ran.count(3));
  EXPECT_LT(tuned.ran.size(), kSpace / 2);
}

TEST(WarmStart, TheSettingTurnsItOffAndAnotherSpaceIsNoNeighbour) {
  TempDir root;
  Tuned tuned(root.path());
  tuned.resolve(1024);
  {
    ScopedEnv off("TRITON_DIST_AUTOTUNE_WARM_START", "0");
    EXPECT_TRUE(tuned.resolve(2048).warm_start_from.empty());
    EXPECT_EQ(tuned.ran.size(), kSpace);
  }
  std::vector<std::string> other = space();
  other.pop_back();
  EXPECT_TRUE(tuned.resolve(4096, other).warm_start_from.empty());
  EXPECT_EQ(tuned.ran.size(), kSpace - 1);
  ScopedEnv bad("TRITON_DIST_AUTOTUNE_WARM_START", "maybe");
  EXPECT_THROW(tuned.resolve(8192), InvalidSetting);
}

TEST(WarmStart, AUserDistanceChoosesTheNeighbours) {
  TempDir root;
  TunerOptions options = Tuned::options(root.path(), std::make_shared<SaidTimer>(), nullptr);
  options.key_distance = [](const std::string&, const std::string&) { return std::numeric_limits<double>::infinity(); };  // none
  Tuned tuned(root.path());
  tuned.resolve(1024);
  FunctionTuner lonely({"matmul", "v1"}, options);
  TuningRequest request;
  request.key = "[2048,4096]";
  request.candidates = space();
  std::set<std::size_t> ran;
  request.run = [&](std::size_t i) { ran.insert(i); };
  EXPECT_TRUE(lonely.resolve(request).warm_start_from.empty());
  EXPECT_EQ(ran.size(), kSpace);
}

TEST(WarmStart, RanksThatFindDifferentNeighboursAllTuneInFull) {
  TempDir seeded, empty;
  Tuned(seeded.path()).resolve(1024);  // only rank 0's directory holds a neighbour
  simulation::LockstepRanks lockstep(2);
  std::vector<TuningReport> reports(2);
  std::vector<std::size_t> ran(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto comm = std::make_shared<simulation::LockstepRanks::Rank>(lockstep, r);
        Tuned tuned(r == 0 ? seeded.path() : empty.path(), comm);
        reports[static_cast<std::size_t>(r)] = tuned.resolve(2048);
        ran[static_cast<std::size_t>(r)] = tuned.ran.size();
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(r)] = error.what();
      }
      lockstep.leave(r);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(errors[r], "");
    EXPECT_TRUE(reports[r].warm_start_from.empty());
    EXPECT_EQ(ran[r], kSpace);
    EXPECT_EQ(reports[r].best, best_tile(2048));
  }
}

/// A grid of 5 tile sizes x 3 warp counts x 4 stage counts: config (b, w, s) is index
/// (b * 3 + w) * 4 + s, and its neighbours are one level away in one of the three.
constexpr int kTiles = 5;
constexpr int kWarps = 3;
constexpr int kStages = 4;
std::size_t grid_index(int b, int w, int s) {
  return static_cast<std::size_t>((b * kWarps + w) * kStages + s);
}

std::vector<std::string> grid_space() {
  std::vector<std::string> list;
  for (int b = 0; b < kTiles; ++b) {
    for (int w = 0; w < kWarps; ++w) {
      for (int s = 0; s < kStages; ++s) {
        list.push_back("{\"BLOCK\":" + std::to_string(16 << b) + ",\"num_warps\":" +
                       std::to_string(2 << w) + ",\"num_stages\":" + std::to_string(s + 2) + "}");
      }
    }
  }
  return list;
}

/// Levels apart, summed over the three parameters.
int grid_steps(std::size_t a, std::size_t b) {
  int steps = 0;
  for (const int radix : {kStages, kWarps, kTiles}) {
    const auto r = static_cast<std::size_t>(radix);
    steps += std::abs(static_cast<int>(a % r) - static_cast<int>(b % r));
    a /= r;
    b /= r;
  }
  return steps;
}

// Ahead of its probe, the warm start names the probe, then the unmeasured neighbours of the
// prior's 2nd and 3rd on the compile threads the probe leaves idle (SpaceInfo::compile_threads,
// 16 unless the front end says otherwise): when the
// prior's 2nd is the fastest probed, the first climb round measures them, compiled already.
// Ahead of a climb round it names nothing (the next one depends on this one's times).
TEST(WarmStart, TheProbeNamesAheadWhatTheFirstClimbLikelyMeasures) {
  const std::vector<std::string> configs = grid_space();
  const std::size_t second = grid_index(3, 2, 2);
  const std::vector<std::size_t> prior = {grid_index(2, 1, 1), second, grid_index(1, 0, 2),
                                          grid_index(4, 0, 0)};
  Measurement m;
  m.strategy = "exhaustive";
  std::unique_ptr<Strategy> strategy = make_warm_start_strategy(m);
  strategy->begin(SpaceInfo{configs, prior, 0});
  const Round probe = strategy->first_round(configs.size());
  ASSERT_LT(probe.candidates.size(), kDefaultCompileThreads);  // threads left idle

  const std::vector<std::size_t> ahead = strategy->ahead();
  ASSERT_EQ(ahead.size(), kDefaultCompileThreads);
  ASSERT_TRUE(std::equal(probe.candidates.begin(), probe.candidates.end(), ahead.begin()));
  const std::vector<std::size_t> guesses(
      ahead.begin() + static_cast<std::ptrdiff_t>(probe.candidates.size()), ahead.end());
  for (std::size_t c : guesses) {
    EXPECT_EQ(std::count(probe.candidates.begin(), probe.candidates.end(), c), 0) << c;
    EXPECT_TRUE(grid_steps(c, prior[1]) == 1 || grid_steps(c, prior[2]) == 1) << c;
  }

  // Each level away from the prior's 2nd costs 0.1 ms: it is the fastest probed.
  const auto cost_ms = [&](std::size_t c) { return 1.0 + 0.1 * grid_steps(c, second); };
  std::vector<CandidateStanding> standings(configs.size());
  for (std::size_t c : probe.candidates) standings[c] = {false, cost_ms(c), 0.0, 3};
  const Round climb = strategy->next_round(standings);
  ASSERT_GT(climb.timed_runs, 0);  // a climb round, not the race
  for (std::size_t c : guesses) {
    EXPECT_NE(std::find(climb.candidates.begin(), climb.candidates.end(), c),
              climb.candidates.end())
        << c;
  }
  EXPECT_TRUE(strategy->ahead().empty());

  // A front end with fewer compile threads gets fewer guesses: one beside the probe.
  std::unique_ptr<Strategy> narrow = make_warm_start_strategy(m);
  narrow->begin(SpaceInfo{configs, prior, 0, probe.candidates.size() + 1});
  (void)narrow->first_round(configs.size());
  EXPECT_EQ(narrow->ahead().size(), probe.candidates.size() + 1);
}

TEST(WarmStart, RecordsWithoutItStillReadAndABadOneIsRefused) {
  Record record = testing::sample_record();
  EXPECT_FALSE(record_from_json(record_to_json(record)).warm_start);
  record.warm_start = WarmStart{{"[1]"}, {0}};
  const Record back = record_from_json(record_to_json(record));
  ASSERT_TRUE(back.warm_start);
  EXPECT_EQ(back.warm_start->from_keys, std::vector<std::string>{"[1]"});
  Value json = record_to_json(record);
  json["warm_start"]["prior"] = Value::array({99});
  EXPECT_THROW(record_from_json(json), std::runtime_error);
}

}  // namespace
}  // namespace disttune
