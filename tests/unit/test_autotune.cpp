// Tests of the C++ function-level API (autotune.hpp) over the engine, timed by a cost model.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/autotune.hpp"
#include "disttune/store.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;

struct SpinConfig {
  int id = 0;
  double cost_us = 0.0;  ///< what one run of this config costs in the cost model
  bool throws = false;
};
Value describe(const SpinConfig& c) { return {{"id", c.id}, {"cost_us", c.cost_us}}; }

/// The cost of the last run launched on this thread (the engine times a run on the thread
/// that launches it).
thread_local double last_run_cost_ms = 0.0;

/// Each timed run lasts what its config costs, whatever the load of the machine: run counts
/// and winners are the cost model's, never the wall clock's.
class CostTimer final : public Timer {
 public:
  void start() override {}
  void stop() override { samples_.push_back(last_run_cost_ms); }
  std::vector<double> collect() override { return std::exchange(samples_, {}); }
  std::string name() const override { return "cost-model"; }

 private:
  std::vector<double> samples_;
};

/// Rank 0 of two whose peer mirrors it, except that the peer's part of every all_gather is
/// `peer` when that is set. Every part this rank gathers is appended to `gathered`.
std::unique_ptr<Communicator> two_ranks(std::vector<std::string>& gathered,
                                        std::optional<std::string> peer = std::nullopt) {
  CommunicatorCallbacks callbacks;
  callbacks.rank = 0;
  callbacks.size = 2;
  callbacks.barrier = [](const CollectiveContext&) {};
  callbacks.all_reduce_max = [](std::span<double>, const CollectiveContext&) {};
  callbacks.all_gather = [&gathered, peer](const std::string& bytes, const CollectiveContext&) {
    gathered.push_back(bytes);
    return std::vector<std::string>{bytes, peer.value_or(bytes)};
  };
  return make_callback_communicator(std::move(callbacks));
}

/// A fresh cache root per test, removed afterwards; env vars restored.
class AutotuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("disttune-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    for (const char* name : {"TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "TRITON_DIST_AUTOTUNE_VERSION_CHECK",
                             "TRITON_DIST_AUTOTUNE_CACHE_DIR", "TRITON_DIST_AUTOTUNE_TIMEOUT",
                             "TRITON_DIST_AUTOTUNE_STRATEGY"}) {
      ::unsetenv(name);
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  using Tuned = Autotuned<SpinConfig, int, int(int)>;

  /// A tuned function over `configs` whose launcher counts runs per config id.
  Tuned make(std::vector<SpinConfig> configs, std::string digest = "v1") {
    Tuned::Spec spec;
    spec.identity = {"spin", std::move(digest)};
    spec.configs = std::move(configs);
    spec.key = [](const int& n) { return n; };
    spec.launch = [this](const SpinConfig& c, int n) {
      {
        std::lock_guard lock(mutex_);
        ++runs_[c.id];
      }
      if (c.throws) throw std::runtime_error("config " + std::to_string(c.id) + " is broken");
      last_run_cost_ms = c.cost_us / 1000.0;
      return n * 100 + c.id;
    };
    spec.options.timer = timer_;
    spec.options.measurement.warmup_runs = 1;
    spec.options.measurement.timed_runs = 5;
    spec.options.measurement.strategy = "exhaustive";  // run counts below follow 1 + 5
    spec.options.cache_root = root_;
    return Tuned(std::move(spec));
  }

  int runs(int id) {
    std::lock_guard lock(mutex_);
    return runs_[id];
  }
  int total_runs() {
    std::lock_guard lock(mutex_);
    int total = 0;
    for (auto& [id, count] : runs_) total += count;
    return total;
  }

  /// Calls `tuned` as rank 0 of two whose rank 1 sends `peer_part`, and expects a
  /// RankDisagreement whose text holds `difference` and not `unnamed` (when given), raised
  /// before any config ran.
  void expect_refused_before_any_run(Tuned& tuned, const std::string& peer_part, const std::string& difference,
                                     const std::string& unnamed = "") {
    std::vector<std::string> parts;
    auto ranks = two_ranks(parts, peer_part);
    const int runs_before = total_runs();
    try {
      tuned.call({.communicator = ranks.get()}, 7);
      ADD_FAILURE() << "ranks that differ in " << difference << " must not tune together";
    } catch (const RankDisagreement& error) {
      const std::string what = error.what();
      EXPECT_NE(what.find(difference), std::string::npos) << what;
      if (!unnamed.empty()) {
        EXPECT_EQ(what.find(unnamed), std::string::npos) << what;  // only what differs is named
      }
    }
    EXPECT_EQ(total_runs(), runs_before);
  }

  std::vector<fs::path> records() const {
    std::vector<fs::path> found;
    if (!fs::exists(root_ / "spin")) return found;
    for (const auto& entry : fs::directory_iterator(root_ / "spin")) {
      if (entry.path().extension() == ".json") found.push_back(entry.path());
    }
    return found;
  }

  fs::path root_;
  std::shared_ptr<CostTimer> timer_ = std::make_shared<CostTimer>();
  std::mutex mutex_;
  std::map<int, int> runs_;
};

const std::vector<SpinConfig> kThree = {{0, 400.0}, {1, 50.0}, {2, 200.0}};

/// Times with the host clock and reports that it clears the device cache before each timed
/// run, as a CudaTimer with flush_l2 does.
class FlushingTimer final : public Timer {
 public:
  void start() override { clock_.start(); }
  void stop() override { clock_.stop(); }
  std::vector<double> collect() override { return clock_.collect(); }
  std::string name() const override { return "flushing"; }
  bool flushes_l2() const override { return true; }

 private:
  CpuTimer clock_;
};

TEST_F(AutotuneTest, AKeyTooLongForARecordIsRefusedBeforeTuning) {
  Autotuned<SpinConfig, std::string, int(int)>::Spec spec;
  spec.identity = {"spin", "v1"};
  spec.configs = kThree;
  spec.key = [](const int&) { return std::string(kMaxKeyBytes, 'k'); };
  spec.launch = [this](const SpinConfig& c, int n) {
    std::lock_guard lock(mutex_);
    ++runs_[c.id];
    return n;
  };
  spec.options.cache_root = root_;
  Autotuned<SpinConfig, std::string, int(int)> tuned(std::move(spec));
  try {
    tuned(1);
    ADD_FAILURE() << "a key longer than a record holds was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("a cache record holds keys of at most"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(total_runs(), 0);
}

TEST_F(AutotuneTest, PicksTheFastestAndReturnsItsResult) {
  auto tuned = make(kThree);
  EXPECT_EQ(tuned(7), 701);  // config 1 is the fastest: its result is returned
  EXPECT_EQ(tuned.cached_choice(7), 1u);
  // warm-up 1 + timed 5 per config, then one more run of the best.
  EXPECT_EQ(runs(0), 6);
  EXPECT_EQ(runs(1), 7);
  EXPECT_EQ(runs(2), 6);
  const auto report = tuned.last_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->candidates.size(), 3u);
  EXPECT_GT(report->candidates[0].agreed_ms, report->candidates[1].agreed_ms);
  EXPECT_EQ(report->candidates[1].samples.size(), 5u);
  EXPECT_NE(format_table(*report).find("best: [1]"), std::string::npos);
}

TEST_F(AutotuneTest, InProcessHitDoesNotTuneAgain) {
  auto tuned = make(kThree);
  tuned(7);
  const int after_first = total_runs();
  EXPECT_EQ(tuned(7), 701);
  EXPECT_EQ(total_runs(), after_first + 1);
}

TEST_F(AutotuneTest, DiskHitInANewInstanceDoesNotTune) {
  { make(kThree)(7); }
  ASSERT_EQ(records().size(), 1u);
  runs_.clear();
  auto again = make(kThree);
  EXPECT_EQ(again(7), 701);
  EXPECT_EQ(total_runs(), 1);
  EXPECT_EQ(source_name(*again.last_report()), "disk");
}

TEST_F(AutotuneTest, NewKeyTunesAgain) {
  auto tuned = make(kThree);
  tuned(7);
  runs_.clear();
  EXPECT_EQ(tuned(8), 801);
  EXPECT_EQ(total_runs(), 19);
  EXPECT_EQ(records().size(), 2u);
}

TEST_F(AutotuneTest, ChangedDigestNeverReusesARecord) {
  { make(kThree, "v1")(7); }
  runs_.clear();
  auto changed = make(kThree, "v2");
  changed(7);
  EXPECT_EQ(total_runs(), 19);
}

TEST_F(AutotuneTest, AutotuneOffRunsTheFirstConfigWithoutCache) {
  auto tuned = make(kThree);
  EXPECT_EQ(tuned.call(CallOptions{.autotune = false}, 7), 700);
  EXPECT_EQ(total_runs(), 1);
  EXPECT_FALSE(tuned.cached_choice(7));
  EXPECT_TRUE(records().empty());
}

TEST_F(AutotuneTest, PrunedConfigsAreNeverRun) {
  Tuned::Spec spec = make(kThree).spec();
  spec.prune = [](const SpinConfig& c, const int&) { return c.id != 1; };
  Tuned tuned(std::move(spec));
  EXPECT_EQ(tuned(7), 702);
  EXPECT_EQ(runs(1), 0);
  // The pruned config is named in the report, its table and the record.
  const TuningReport report = *tuned.last_report();
  const std::string pruned = canonical_json(describe(kThree[1]));
  EXPECT_EQ(report.pruned, std::vector<std::string>{pruned});
  EXPECT_NE(format_table(report).find("  pruned for this key (1, never run): " + pruned + "\n"), std::string::npos)
      << format_table(report);
  ASSERT_EQ(records().size(), 1u);
  const RecordRead read = read_record(records()[0]);
  ASSERT_TRUE(read.record) << read.error;
  EXPECT_EQ(read.record->pruned, std::vector<std::string>{pruned});
  EXPECT_EQ(report_of_record(*read.record, DiskStore::kSource).pruned, std::vector<std::string>{pruned});
}

TEST_F(AutotuneTest, PruningEverythingIsAClearError) {
  Tuned::Spec spec = make(kThree).spec();
  spec.prune = [](const SpinConfig&, const int&) { return false; };
  Tuned tuned(std::move(spec));
  try {
    tuned(7);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("removed every config"), std::string::npos);
  }
  EXPECT_EQ(total_runs(), 0);
}

TEST_F(AutotuneTest, AFailureTextThatIsNotUtf8IsRecordedReadably) {
  Tuned::Spec spec = make(kThree).spec();
  spec.launch = [](const SpinConfig& c, int n) {
    // A reason built from a Latin-1 file name: the record is still written, and reads.
    if (c.id == 0) throw std::runtime_error("cannot open caf\xe9.bin");
    last_run_cost_ms = c.cost_us / 1000.0;
    return n * 100 + c.id;
  };
  Tuned tuned(std::move(spec));
  EXPECT_EQ(tuned(7), 701);
  EXPECT_EQ(tuned.last_report()->candidates[0].error, "cannot open caf\\xe9.bin");
  EXPECT_NE(format_table(*tuned.last_report()).find("caf\\xe9.bin"), std::string::npos);
  ASSERT_EQ(records().size(), 1u);
  const Value stored = Value::parse(std::ifstream(records().at(0)));
  EXPECT_EQ(stored["candidates"][0]["error"], "cannot open caf\\xe9.bin");
}

TEST_F(AutotuneTest, FailingConfigIsRecordedAndTuningGoesOn) {
  auto tuned = make({{0, 400.0}, {1, 10.0, true}, {2, 100.0}});
  EXPECT_EQ(tuned(7), 702);
  const auto report = tuned.last_report();
  EXPECT_TRUE(report->candidates[1].failed);
  EXPECT_EQ(report->candidates[1].error, "config 1 is broken");
  EXPECT_EQ(runs(1), 1);  // the failed config is not run again after its first failure
  const Value stored = Value::parse(std::ifstream(records().at(0)));
  EXPECT_EQ(stored["candidates"][1]["status"], "failed");
}

TEST_F(AutotuneTest, EveryConfigFailingListsTheReasons) {
  auto tuned = make({{0, 1.0, true}, {1, 1.0, true}});
  try {
    tuned(7);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("every config"), std::string::npos);
    EXPECT_NE(text.find("config 0 is broken"), std::string::npos);
    EXPECT_NE(text.find("config 1 is broken"), std::string::npos);
  }
  EXPECT_TRUE(records().empty());
}

TEST_F(AutotuneTest, ConcurrentCallsWithOneNewKeyTuneOnce) {
  auto tuned = make(kThree);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (tuned(7) != 701) ++wrong;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(runs(0), 6);  // config 0 was only measured once
  EXPECT_EQ(runs(1), 5 + 1 + 8);
}

TEST_F(AutotuneTest, AlwaysTuneIgnoresStoredRecords) {
  { make(kThree)(7); }
  runs_.clear();
  ::setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "1", 1);
  auto again = make(kThree);
  again(7);
  EXPECT_EQ(total_runs(), 19);
}

TEST_F(AutotuneTest, BadEnvFlagIsAClearError) {
  ::setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "sometimes", 1);
  EXPECT_THROW(make(kThree), InvalidSetting);  // when the tuner is made
  ::unsetenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE");
  auto tuned = make(kThree);
  ::setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "sometimes", 1);
  EXPECT_THROW(tuned(7), std::invalid_argument);  // and on a miss
}

TEST_F(AutotuneTest, BadEnvFlagIsRefusedWithTheDiskCacheOffToo) {
  Tuned::Spec spec = make(kThree).spec();
  spec.options.disk_cache = false;
  Tuned tuned(std::move(spec));
  ::setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "sometimes", 1);
  try {
    tuned(7);
    ADD_FAILURE() << "accepted";
  } catch (const InvalidSetting& error) {
    EXPECT_EQ(std::string(error.what()),
              "disttune: TRITON_DIST_AUTOTUNE_ALWAYS_TUNE must be 1/0, true/false, yes/no or on/off, got 'sometimes'");
  }
  ::unsetenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE");
}

TEST_F(AutotuneTest, CacheDirEnvVarChoosesTheRoot) {
  ::setenv("TRITON_DIST_AUTOTUNE_CACHE_DIR", root_.c_str(), 1);
  Tuned::Spec spec = make(kThree).spec();
  spec.options.cache_root.reset();
  Tuned tuned(std::move(spec));
  tuned(7);
  EXPECT_EQ(records().size(), 1u);
}

/// Rewrites the stored record's deps, as if an older library had written it.
void age_record(const fs::path& path) {
  Value record = Value::parse(std::ifstream(path));
  record["deps"]["disttune"] = "0.0.1";
  std::ofstream(path) << record.dump();
}

TEST_F(AutotuneTest, DepsMismatchWarnsAndUsesTheRecord) {
  { make(kThree)(7); }
  age_record(records().at(0));
  runs_.clear();
  auto again = make(kThree);
  again(7);
  EXPECT_EQ(total_runs(), 1);
}

TEST_F(AutotuneTest, VersionCheckRetunesOnDepsMismatch) {
  { make(kThree)(7); }
  age_record(records().at(0));
  runs_.clear();
  ::setenv("TRITON_DIST_AUTOTUNE_VERSION_CHECK", "1", 1);
  auto again = make(kThree);
  again(7);
  EXPECT_EQ(total_runs(), 19);
}

TEST_F(AutotuneTest, StoredBestOutsideTheCurrentSpaceIsAMiss) {
  { make(kThree)(7); }
  runs_.clear();
  // Same identity and key, but the stored best (id 1) is pruned away now.
  Tuned::Spec spec = make(kThree).spec();
  spec.prune = [](const SpinConfig& c, const int&) { return c.id != 1; };
  Tuned pruned(std::move(spec));
  EXPECT_EQ(pruned(7), 702);
  EXPECT_EQ(runs(0), 6);
}

TEST_F(AutotuneTest, DiskCacheOffWritesNothing) {
  Tuned::Spec spec = make(kThree).spec();
  spec.options.disk_cache = false;
  Tuned tuned(std::move(spec));
  tuned(7);
  EXPECT_FALSE(fs::exists(root_));
}

TEST_F(AutotuneTest, BadSpecIsRejected) {
  Tuned::Spec spec = make(kThree).spec();
  spec.configs.clear();
  EXPECT_THROW(Tuned{spec}, std::invalid_argument);
  spec = make(kThree).spec();
  spec.identity.name = "../escape";
  EXPECT_THROW(Tuned{spec}, std::invalid_argument);
  spec = make(kThree).spec();
  spec.options.measurement.timed_runs = 0;
  EXPECT_THROW(Tuned{spec}, std::invalid_argument);
}

TEST_F(AutotuneTest, LogFileIsWrittenBesideTheRecord) {
  auto tuned = make(kThree);
  tuned(7);
  const auto log = tuned.last_report()->log_path;
  ASSERT_TRUE(log);
  EXPECT_EQ(log->parent_path(), root_ / "spin");
  std::ifstream in(*log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("key 7"), std::string::npos);
  EXPECT_NE(text.find("samples_ms"), std::string::npos);
  EXPECT_NE(text.find("best candidate 1"), std::string::npos);
}

TEST_F(AutotuneTest, RecordTakesFlushL2FromTheTimer) {
  { make(kThree)(7); }  // CpuTimer: no flush
  Tuned::Spec spec = make(kThree).spec();
  spec.options.timer = std::make_shared<FlushingTimer>();
  Tuned flushing(std::move(spec));
  flushing(8);
  ASSERT_EQ(records().size(), 2u);
  for (const fs::path& path : records()) {
    const Record record = record_from_json(Value::parse(std::ifstream(path)));
    const bool flushed = record.id.key == "8";
    EXPECT_EQ(record.flush_l2, flushed) << record.id.key;
    EXPECT_EQ(Value::parse(std::ifstream(path))["measurement"]["flush_l2"], flushed) << record.id.key;
  }
}

TEST_F(AutotuneTest, RecordReportAndTableNameTheTimer) {
  Tuned::Spec spec = make(kThree).spec();
  spec.options.timer = std::make_shared<FlushingTimer>();
  Tuned flushing(std::move(spec));
  flushing(8);
  EXPECT_EQ(flushing.last_report()->timer, "flushing");
  EXPECT_NE(format_table(*flushing.last_report()).find("  timer: flushing\n"), std::string::npos);
  ASSERT_EQ(records().size(), 1u);
  EXPECT_EQ(Value::parse(std::ifstream(records().front()))["measurement"]["timer"], "flushing");

  Tuned::Spec again = make(kThree).spec();
  again.options.timer = std::make_shared<FlushingTimer>();
  Tuned second(std::move(again));
  second(8);  // read from disk: the report names the record's timer
  EXPECT_EQ(source_name(*second.last_report()), "disk");
  EXPECT_EQ(second.last_report()->timer, "flushing");
}

TEST_F(AutotuneTest, RanksCompareWhetherTheirTimersFlushL2) {
  // What a rank whose timer does not flush sends in the digest check (the first gather).
  std::vector<std::string> plain_parts;
  auto plain_ranks = two_ranks(plain_parts);
  make(kThree).call({.communicator = plain_ranks.get()}, 7);
  ASSERT_FALSE(plain_parts.empty());
  EXPECT_NE(plain_parts.front().find(R"("flush_l2":false)"), std::string::npos);

  // Same function, key and configs, but this rank's timer flushes: the ranks disagree.
  Tuned::Spec spec = make(kThree).spec();
  spec.options.timer = std::make_shared<FlushingTimer>();
  Tuned flushing(std::move(spec));
  expect_refused_before_any_run(flushing, plain_parts.front(),
                                "rank 1 differs from rank 0 in measurement.flush_l2: false vs true");
}

TEST_F(AutotuneTest, RanksCompareTheStrategysParametersByValue) {
  const auto converge = [this](std::map<std::string, std::string> parameters) {
    Tuned::Spec spec = make(kThree).spec();
    spec.options.measurement.strategy = "converge";
    spec.options.measurement.strategy_options = std::move(parameters);
    return spec;
  };
  std::vector<std::string> strict_parts;
  auto strict_ranks = two_ranks(strict_parts);
  Tuned strict(converge({{"max_noise", "0.005"}}));
  strict.call({.communicator = strict_ranks.get()}, 7);
  ASSERT_FALSE(strict_parts.empty());

  // Another rank that writes the same value otherwise, or leaves the default (0.005), agrees.
  for (const std::map<std::string, std::string>& same :
       {std::map<std::string, std::string>{{"max_noise", "5e-3"}}, std::map<std::string, std::string>{},
        std::map<std::string, std::string>{{"max_noise", "0.0050"}, {"seed", "0"}, {"budget_ms", "-0"}}}) {
    Tuned alike(converge(same));
    std::vector<std::string> alike_parts;
    auto alike_ranks = two_ranks(alike_parts, strict_parts.front());
    EXPECT_NO_THROW(alike.call({.communicator = alike_ranks.get()}, 7));
    ASSERT_FALSE(alike_parts.empty());
    EXPECT_EQ(alike_parts.front().find("5e-3"), std::string::npos) << alike_parts.front();
    EXPECT_EQ(alike_parts.front(), strict_parts.front());  // the same digest, byte for byte
  }

  // The same tuning but this rank's converge stops at 1% noise: the ranks disagree.
  Tuned loose(converge({{"max_noise", "0.01"}}));
  expect_refused_before_any_run(
      loose, strict_parts.front(),
      R"(rank 1 differs from rank 0 in measurement.strategy_options.max_noise: "0.005" vs "0.01")", "min_time_ms");
}

const std::vector<SpinConfig> kFive = {{0, 400.0}, {1, 50.0}, {2, 200.0}, {3, 800.0}, {4, 300.0}};

TEST_F(AutotuneTest, AdaptiveStrategyPicksTheFastestWithFewerRuns) {
  Tuned::Spec spec = make(kFive).spec();
  spec.options.measurement.strategy = "adaptive";
  Tuned tuned(std::move(spec));
  EXPECT_EQ(tuned(7), 701);
  for (int id : {0, 2, 3, 4}) EXPECT_EQ(runs(id), 3) << "config " << id;  // 1 warm-up + 2 timed
  EXPECT_EQ(runs(1), 4);                                                   // ... + the final run
  const Value stored = Value::parse(std::ifstream(records().at(0)));
  EXPECT_EQ(stored["measurement"]["strategy"], "adaptive");
  EXPECT_EQ(stored["candidates"][0]["status"], "dropped");
  EXPECT_EQ(stored["candidates"][1]["status"], "ok");
  EXPECT_TRUE(stored["candidates"][1]["noise"].is_number());
  EXPECT_NE(format_table(*tuned.last_report()).find("dropped"), std::string::npos);
}

TEST_F(AutotuneTest, StrategyEnvVarSelectsAdaptive) {
  ::setenv("TRITON_DIST_AUTOTUNE_STRATEGY", "adaptive", 1);
  Tuned::Spec spec = make(kFive).spec();
  spec.options.measurement.strategy.clear();  // none asked for: the variable decides
  Tuned tuned(spec);
  EXPECT_EQ(tuned(7), 701);
  EXPECT_EQ(runs(0), 3);
  ::setenv("TRITON_DIST_AUTOTUNE_STRATEGY", "no-such-strategy", 1);  // "random" is registered
  EXPECT_THROW(Tuned{spec}, std::invalid_argument);
}

/// A key whose hashes are counted: each lookup in the hit cache, each insert's probe, and each
/// move into a grown table hashes the key once.
struct CountedKey {
  int n = 0;
  bool operator==(const CountedKey& other) const { return n == other.n; }
};
std::atomic<int> counted_key_hashes{0};
Value describe(const CountedKey& key) { return key.n; }

}  // namespace

template <>
struct KeyHash<CountedKey> {
  std::size_t operator()(const CountedKey& key) const {
    ++counted_key_hashes;
    return std::hash<int>{}(key.n);
  }
};

namespace {

TEST_F(AutotuneTest, EachCallRunsTheKeyFunctionOnceAndAMissLooksTheCacheUpOnce) {
  Autotuned<SpinConfig, CountedKey, int(int)>::Spec spec;
  int key_calls = 0;
  spec.identity = {"counted", "v1"};
  spec.configs = kThree;
  spec.key = [&](const int& n) {
    ++key_calls;
    return CountedKey{n};
  };
  spec.launch = [](const SpinConfig& c, int n) { return n * 100 + c.id; };
  spec.options.measurement.warmup_runs = 0;
  spec.options.measurement.timed_runs = 1;
  spec.options.measurement.strategy = "exhaustive";
  spec.options.disk_cache = false;
  Autotuned<SpinConfig, CountedKey, int(int)> tuned(std::move(spec));

  tuned(3);  // the cache holds a key, so a miss searches a table
  key_calls = 0;
  counted_key_hashes = 0;
  const int first = tuned(7);
  EXPECT_EQ(key_calls, 1);
  // The lookup that missed, then the insert's probe (the table has room); no second lookup.
  EXPECT_EQ(counted_key_hashes.load(), 1 + 1);
  counted_key_hashes = 0;
  EXPECT_EQ(tuned(7), first);
  EXPECT_EQ(key_calls, 2);
  EXPECT_EQ(counted_key_hashes.load(), 1);  // the hit
}

/// The direct spelling's launcher: a function object with state of its own that
/// std::function could not hold (move-only), counting its runs per config id.
struct MoveOnlyLauncher {
  std::unique_ptr<std::map<int, int>> runs = std::make_unique<std::map<int, int>>();
  int operator()(const SpinConfig& c, int n) {
    ++(*runs)[c.id];
    if (c.throws) throw std::runtime_error("config " + std::to_string(c.id) + " is broken");
    last_run_cost_ms = c.cost_us / 1000.0;
    return n * 100 + c.id;
  }
};

TEST_F(AutotuneTest, TheDirectSpellingTunesHitsAndStoresLikeTheStdFunctionOne) {
  const std::vector<SpinConfig> configs = {{0, 400.0}, {1, 50.0}, {2, 200.0}, {3, 0.0, true}};
  Tuned erased = make(configs);
  EXPECT_EQ(erased(7), 701);
  EXPECT_EQ(erased(7), 701);

  Tuned::Spec spec = make(configs).spec();
  spec.key = nullptr;
  spec.launch = nullptr;
  spec.options.cache_root = root_ / "direct";
  int key_calls = 0;
  Autotuned direct(
      std::move(spec),
      [&key_calls](const int& n) {
        ++key_calls;
        return n;
      },
      MoveOnlyLauncher{});
  static_assert(std::is_same_v<decltype(direct)::Launcher, MoveOnlyLauncher>);
  EXPECT_EQ(direct(7), 701);
  EXPECT_EQ(key_calls, 1);
  const std::map<int, int> tuned_runs = *direct.launcher().runs;
  EXPECT_EQ(direct(7), 701);  // a hit: one key call, one launch of the best
  EXPECT_EQ(key_calls, 2);
  EXPECT_EQ((*direct.launcher().runs)[1], tuned_runs.at(1) + 1);
  // The same runs per config as the std::function spelling (the broken one failed alike).
  std::map<int, int> erased_runs;
  for (int id = 0; id < 4; ++id) erased_runs[id] = runs(id);
  EXPECT_EQ(*direct.launcher().runs, erased_runs);
  EXPECT_EQ(direct.cached_choice(7), erased.cached_choice(7));
  EXPECT_EQ(direct.last_report()->candidates.size(), 4u);
  EXPECT_FALSE(direct.last_report()->candidates[3].error.empty());
  // The record on disk, read back by the std::function spelling: a disk hit, no tuning.
  Tuned::Spec again = make(configs).spec();
  again.options.cache_root = root_ / "direct";
  Tuned reader(std::move(again));
  const int before = total_runs();
  EXPECT_EQ(reader(7), 701);
  EXPECT_EQ(total_runs(), before + 1);
  EXPECT_EQ(direct.call(CallOptions{.autotune = false}, 8), 800);
  EXPECT_FALSE(direct.cached_choice(8));
}

TEST_F(AutotuneTest, TheDirectSpellingRefusesAKeyOrLauncherGivenTwiceOrNull) {
  const auto key = [](const int& n) { return n; };
  const auto launch = [](const SpinConfig& c, int n) { return n + c.id; };
  Tuned::Spec twice = make(kThree).spec();  // spec.key and spec.launch are set
  try {
    Autotuned tuned(twice, key, launch);
    FAIL() << "a launcher given twice was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("twice"), std::string::npos) << error.what();
  }
  Tuned::Spec bare = twice;
  bare.key = nullptr;
  bare.launch = nullptr;
  int (*no_launcher)(const SpinConfig&, int) = nullptr;
  try {
    Autotuned tuned(bare, key, no_launcher);
    FAIL() << "a null launcher was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("has no launcher"), std::string::npos) << error.what();
  }
  bare.configs.clear();
  EXPECT_THROW(Autotuned(bare, key, launch), std::invalid_argument);
}

TEST_F(AutotuneTest, TheDirectSpellingChecksOutputsWithItsOwnLauncher) {
  using Checked = Autotuned<SpinConfig, int, int(int), int (*)(const int&), MoveOnlyLauncher>;
  Checked::Spec spec = make(kThree).spec();
  spec.key = nullptr;
  spec.launch = nullptr;
  spec.options.disk_cache = false;
  // Config 1, the fastest, returns n * 100 + 1: it differs from the reference's n * 100 + 2.
  spec.check.reference = [](int n) { return n * 100 + 2; };
  Checked tuned(std::move(spec), [](const int& n) { return n; }, MoveOnlyLauncher{});
  EXPECT_EQ(tuned(7), 702);  // config 1 and config 0 failed their check; config 2 is chosen
  EXPECT_NE(tuned.last_report()->candidates[1].error.find("differs from the reference"), std::string::npos);
}

}  // namespace
}  // namespace disttune
