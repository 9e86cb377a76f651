// Contextual tuning: the spec's step table, final run, failures, nesting, logs, isolated tuning.
#include <atomic>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/context.hpp"
#include "disttune/strategy.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;

/// A timer whose runs take what the last launch says they take, and that notes how many
/// launches each start/stop pair enclosed.
class ScriptedTimer final : public Timer {
 public:
  void start() override { launches_at_start_ = launches; }
  void stop() override {
    const bool invalid = invalid_stops > 0;
    if (invalid) --invalid_stops;
    durations_.push_back(invalid ? std::numeric_limits<double>::quiet_NaN() : next_ms);
    enclosed.push_back(launches - launches_at_start_);
  }
  std::vector<double> collect() override {
    std::vector<double> durations = std::exchange(durations_, {});
    if (fail_collects > 0) {
      --fail_collects;
      throw std::runtime_error("device lost the events");
    }
    return durations;
  }
  std::string name() const override { return "scripted"; }
  bool flushes_l2() const override { return flushes; }

  bool flushes = false;           ///< what flushes_l2() answers
  int fail_collects = 0;          ///< how many collect() calls throw from now on
  int invalid_stops = 0;          ///< how many of the next pairs time NaN

  int launches = 0;               ///< every kernel launch counts itself here
  double next_ms = 0.0;           ///< the time of the pair now open
  std::vector<int> enclosed;      ///< launches inside each start/stop pair

 private:
  int launches_at_start_ = 0;
  std::vector<double> durations_;
};

/// A config: the block size the kernels work in, and what a run of it "takes".
struct Blocked {
  int block = 1;
  double cost_ms = 1.0;
  bool fails = false;
};
Value describe(const Blocked& config) { return Value{{"block", config.block}}; }

using Kernel = TunableKernel<Blocked, std::size_t, void(std::vector<double>&, std::vector<double>&)>;

/// Buffers shared by the kernels of one outer function: y = 2 * x, then sum = sum(y).
struct Buffers {
  std::vector<double> x, y, partial;
  explicit Buffers(std::size_t n) : x(n), y(n) { std::iota(x.begin(), x.end(), 1.0); }
  double expected_sum() const { return static_cast<double>(x.size() * (x.size() + 1)); }
};

class Context : public ::testing::Test {
 protected:
  void SetUp() override {
    log_dir_ = fs::temp_directory_path() /
               ("disttune-context-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(log_dir_);
  }
  void TearDown() override { fs::remove_all(log_dir_); }

  ContextOptions options(int n_warmup, int n_repeat) const {
    ContextOptions o;
    o.n_warmup = n_warmup;
    o.n_repeat = n_repeat;
    o.timer = timer_;
    o.log_dir = log_dir_;
    return o;
  }

  /// A kernel that runs `body` per block and notes which config it ran in `ran`.
  Kernel make_kernel(const std::string& name, std::vector<Blocked> configs, std::vector<int>& ran,
                     std::function<void(const Blocked&, std::vector<double>&, std::vector<double>&)> body) {
    Kernel::Spec spec;
    spec.name = name;
    spec.configs = std::move(configs);
    spec.key = [](const std::vector<double>& in, const std::vector<double>&) { return in.size(); };
    spec.launch = [this, &ran, body](const Blocked& c, std::vector<double>& in, std::vector<double>& out) {
      ++timer_->launches;
      timer_->next_ms = c.cost_ms;
      ran.push_back(c.block);
      if (c.fails) throw std::runtime_error("block " + std::to_string(c.block) + " is out of resources");
      body(c, in, out);
    };
    spec.isolated.timer = timer_;
    spec.isolated.measurement.strategy = "exhaustive";
    return Kernel(std::move(spec));
  }

  /// y = 2 * x, written block by block.
  Kernel make_scale(std::vector<Blocked> configs, std::vector<int>& ran) {
    return make_kernel("scale", std::move(configs), ran, [](const Blocked& c, auto& x, auto& y) {
      for (std::size_t start = 0; start < x.size(); start += c.block) {
        for (std::size_t i = start; i < std::min(x.size(), start + c.block); ++i) y[i] = 2.0 * x[i];
      }
    });
  }

  /// partial = per-block sums of y (then summed by the outer function).
  Kernel make_reduce(std::vector<Blocked> configs, std::vector<int>& ran) {
    return make_kernel("reduce", std::move(configs), ran, [](const Blocked& c, auto& y, auto& partial) {
      partial.assign((y.size() + c.block - 1) / c.block, 0.0);
      for (std::size_t i = 0; i < y.size(); ++i) partial[i / c.block] += y[i];
    });
  }

  std::string read_log() const {
    std::ifstream file(log_dir_ / "rank-0.log");
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  std::shared_ptr<ScriptedTimer> timer_ = std::make_shared<ScriptedTimer>();
  fs::path log_dir_;
};

/// Which config each kernel ran in each outer run: -1 where it did not run.
using Table = std::vector<std::pair<int, int>>;

TEST_F(Context, StepsFollowTheSpecTableAndTheFinalRunUsesTheBestConfigs) {
  // The upstream table: kernel-0 with 2 configs, kernel-1 with 3, two runs per config
  // (one warm-up, one timed); both advance in the same outer run.
  std::vector<int> ran0, ran1;
  Kernel scale = make_scale({{1, 2.0}, {4, 1.0}}, ran0);
  Kernel reduce = make_reduce({{2, 3.0}, {8, 1.0}, {16, 2.0}}, ran1);
  Buffers buffers(100);
  Table table;
  std::vector<double> results;
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        const std::size_t before0 = ran0.size(), before1 = ran1.size();
        scale(b.x, b.y);
        reduce(b.y, b.partial);
        table.emplace_back(ran0.size() > before0 ? ran0.back() : -1, ran1.size() > before1 ? ran1.back() : -1);
        results.push_back(std::accumulate(b.partial.begin(), b.partial.end(), 0.0));
        return results.back();
      },
      options(1, 1));

  const double sum = pipeline(buffers);

  const Table expected{{1, 2}, {1, 2}, {4, 8}, {4, 8}, {4, 16}, {4, 16}, {4, 8}};
  EXPECT_EQ(table, expected);
  EXPECT_EQ(pipeline.tuner().outer_runs(), 7);
  EXPECT_EQ(sum, buffers.expected_sum());
  for (double each : results) EXPECT_EQ(each, buffers.expected_sum());
  ASSERT_TRUE(scale.best_config());
  EXPECT_EQ(scale.best_config()->block, 4);
  ASSERT_TRUE(reduce.best_config());
  EXPECT_EQ(reduce.best_config()->block, 8);
  EXPECT_EQ(reduce.cached_config(100)->block, 8);
  // Every timed pair enclosed exactly one launch: the kernel's own.
  EXPECT_EQ(timer_->enclosed, std::vector<int>(5, 1));
}

TEST_F(Context, TimingsOfTheLastTuningAreKept) {
  std::vector<int> ran0, ran1;
  Kernel scale = make_scale({{1, 2.0}, {4, 1.0}}, ran0);
  Kernel reduce = make_reduce({{2, 3.0}, {8, 0.5}, {16, 2.0}}, ran1);
  Buffers buffers(10);
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { scale(b.x, b.y); reduce(b.y, b.partial); },
                                  options(2, 3));
  pipeline(buffers);
  const std::optional<KernelChoice> tuned = reduce.last_tuning();
  ASSERT_TRUE(tuned);
  EXPECT_EQ(tuned->key, "10");
  EXPECT_EQ(tuned->best, 1u);
  EXPECT_EQ(tuned->config, R"({"block":8})");
  ASSERT_EQ(tuned->candidates.size(), 3u);
  const std::vector<double> costs{3.0, 0.5, 2.0};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(tuned->candidates[i].samples, std::vector<double>(3, costs[i]));
    EXPECT_DOUBLE_EQ(tuned->candidates[i].agreed_ms, costs[i]);
    EXPECT_FALSE(tuned->candidates[i].failed);
  }
  // 3 configs x (2 warm-up + 3 timed) outer runs, then the final one.
  EXPECT_EQ(pipeline.tuner().outer_runs(), 16);
}

TEST_F(Context, DefaultsAreTheUpstreamOnes) {
  const ContextOptions defaults;
  EXPECT_FALSE(defaults.is_dist);
  EXPECT_EQ(defaults.n_warmup, 3);
  EXPECT_EQ(defaults.n_repeat, 5);
  EXPECT_EQ(defaults.statistic, Statistic::mean);
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 2.0}, {4, 1.0}}, ran);
  Buffers buffers(10);
  ContextOptions o;
  o.timer = timer_;
  o.log_dir = log_dir_;
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { scale(b.x, b.y); }, o);
  pipeline(buffers);
  EXPECT_EQ(pipeline.tuner().outer_runs(), 2 * 8 + 1);
  EXPECT_EQ(std::count(ran.begin(), ran.end(), 1), 8);
}

TEST_F(Context, ACachedKeyNeedsOneRunAndANewKeyTunesAgain) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 2.0}, {4, 1.0}}, ran);
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { scale(b.x, b.y); return b.y.back(); },
                                  options(1, 1));
  Buffers small(10), large(20);
  EXPECT_EQ(pipeline(small), 20.0);
  EXPECT_EQ(pipeline.tuner().outer_runs(), 5);
  EXPECT_EQ(pipeline(small), 20.0);
  EXPECT_EQ(pipeline.tuner().outer_runs(), 1);
  EXPECT_EQ(pipeline(large), 40.0);
  EXPECT_EQ(pipeline.tuner().outer_runs(), 5);
}

TEST_F(Context, ANewKeyStartsFromTheChoiceOfTheNearestKey) {
  std::vector<Blocked> configs;
  for (int block = 1; block <= 30; ++block) configs.push_back({block, 1.0 + 0.1 * std::abs(block - 12)});
  std::vector<int> ran;
  Kernel scale = make_scale(configs, ran);
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { scale(b.x, b.y); return b.y.back(); },
                                  options(1, 1));
  Buffers small(10), large(20);
  EXPECT_EQ(pipeline(small), 20.0);
  EXPECT_EQ(std::set<int>(ran.begin(), ran.end()).size(), configs.size());  // nothing to start from
  ran.clear();
  EXPECT_EQ(pipeline(large), 40.0);
  EXPECT_LT(std::set<int>(ran.begin(), ran.end()).size(), configs.size() / 2);
  ASSERT_TRUE(scale.last_tuning());
  EXPECT_EQ(scale.last_tuning()->key, "20");
  EXPECT_EQ(scale.last_tuning()->config, R"({"block":12})");
}

TEST_F(Context, SeveralLaunchesInOneRunShareTheCandidateAndOnlyTheFirstIsTimed) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 2.0}, {4, 1.0}}, ran);
  std::vector<std::vector<int>> per_run;
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        const std::size_t before = ran.size();
        scale(b.x, b.y);
        scale(b.x, b.y);
        per_run.emplace_back(ran.begin() + static_cast<std::ptrdiff_t>(before), ran.end());
      },
      options(1, 2));
  Buffers buffers(10);
  pipeline(buffers);
  const std::vector<std::vector<int>> expected{{1, 1}, {1, 1}, {1, 1}, {4, 4}, {4, 4}, {4, 4}, {4, 4}};
  EXPECT_EQ(per_run, expected);
  EXPECT_EQ(scale.last_tuning()->candidates[0].samples.size(), 2u);
}

TEST_F(Context, AFailingConfigAbandonsTheRunRestartsItAndIsExcluded) {
  std::vector<int> ran0, ran1;
  Kernel scale = make_scale({{1, 1.0}, {2, 0.1, true}, {4, 2.0}}, ran0);
  Kernel reduce = make_reduce({{2, 3.0}, {8, 1.0}}, ran1);
  Buffers buffers(30);
  Table table;
  std::vector<double> results;
  int started = 0;
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        ++started;
        const std::size_t before0 = ran0.size(), before1 = ran1.size();
        std::fill(b.y.begin(), b.y.end(), -1.0);  // state a failed run leaves broken
        try {
          scale(b.x, b.y);
        } catch (const OuterRunAbandoned&) {
          table.emplace_back(ran0.back(), -1);
          throw;
        }
        reduce(b.y, b.partial);
        table.emplace_back(ran0.size() > before0 ? ran0.back() : -1, ran1.size() > before1 ? ran1.back() : -1);
        results.push_back(std::accumulate(b.partial.begin(), b.partial.end(), 0.0));
        return results.back();
      },
      options(1, 1));

  EXPECT_EQ(pipeline(buffers), buffers.expected_sum());
  // Run 2 fails in scale's block 2 and is abandoned before reduce; then block 4 is measured
  // while reduce repeats the step it lost.
  const Table expected{{1, 2}, {1, 2}, {2, -1}, {4, 8}, {4, 8}, {1, 8}};
  EXPECT_EQ(table, expected);
  EXPECT_EQ(started, 6);
  for (double each : results) EXPECT_EQ(each, buffers.expected_sum());
  const KernelChoice tuned = *scale.last_tuning();
  EXPECT_EQ(tuned.best, 0u);
  EXPECT_TRUE(tuned.candidates[1].failed);
  EXPECT_NE(tuned.candidates[1].error.find("out of resources"), std::string::npos);
  EXPECT_TRUE(tuned.candidates[1].samples.empty());
  EXPECT_EQ(std::count(ran0.begin(), ran0.end(), 2), 1);
  const std::string log = read_log();
  EXPECT_NE(log.find("outer-run: 2 abandoned at launch 0: kernel scale"), std::string::npos) << log;
  EXPECT_NE(log.find("restarting the outer run"), std::string::npos);
}

TEST_F(Context, ASwallowedFailureStillAbandonsTheRun) {
  std::vector<int> ran0, ran1;
  Kernel scale = make_scale({{1, 1.0}, {2, 0.1, true}}, ran0);
  Kernel reduce = make_reduce({{2, 3.0}, {8, 1.0}}, ran1);
  Buffers buffers(16);
  int swallowed = 0;
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        try {
          scale(b.x, b.y);
        } catch (const std::exception&) {
          ++swallowed;
        }
        try {
          reduce(b.y, b.partial);  // refused: the run is being abandoned
        } catch (const OuterRunAbandoned&) {
          ++swallowed;
        }
        return std::accumulate(b.partial.begin(), b.partial.end(), 0.0);
      },
      options(1, 1));
  EXPECT_EQ(pipeline(buffers), buffers.expected_sum());
  EXPECT_EQ(swallowed, 2);
  EXPECT_EQ(scale.best_config()->block, 1);
  EXPECT_TRUE(scale.last_tuning()->candidates[1].failed);
  // reduce ran config 2 twice and config 8 twice while tuning, then once at the end;
  // the abandoned run refused its launch, so no step of it was lost or doubled.
  EXPECT_EQ(ran1, (std::vector<int>{2, 2, 8, 8, 8}));
}

TEST_F(Context, ATimerThatCannotCollectFailsTheRunsFirstTimedCandidate) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 1.0}, {2, 2.0}, {4, 3.0}}, ran);
  int runs = 0;
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        if (++runs == 2) timer_->fail_collects = 1;  // run 1 is config 0's timed run
        scale(b.x, b.y);
      },
      options(1, 1));
  Buffers buffers(4);
  pipeline(buffers);
  const KernelChoice tuned = *scale.last_tuning();
  EXPECT_TRUE(tuned.candidates[0].failed);
  EXPECT_EQ(tuned.candidates[0].error, "timer: device lost the events");
  EXPECT_EQ(tuned.best, 1u);
  EXPECT_EQ(runs, 2 + 2 + 2 + 1);
}

TEST_F(Context, AnInvalidTimeFailsItsCandidate) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, -1.0}, {2, 2.0}}, ran);
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { scale(b.x, b.y); }, options(1, 2));
  Buffers buffers(4);
  pipeline(buffers);
  const KernelChoice tuned = *scale.last_tuning();
  EXPECT_TRUE(tuned.candidates[0].failed);
  EXPECT_NE(tuned.candidates[0].error.find("invalid time"), std::string::npos) << tuned.candidates[0].error;
  EXPECT_EQ(tuned.best, 1u);
  // Round 1 (3 + 3 runs) leaves config 0 owing 2 samples: one agreed re-take round of 2
  // timed runs, still invalid, so it fails; then the final run.
  EXPECT_EQ(pipeline.tuner().outer_runs(), 3 + 3 + 2 + 1);
}

TEST_F(Context, AnInvalidTimeIsRetakenInARoundOfItsOwn) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 1.0}, {2, 2.0}}, ran);
  int runs = 0;
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        if (++runs == 2) timer_->invalid_stops = 1;  // run 1 is config 0's first timed run
        scale(b.x, b.y);
      },
      options(1, 2));
  Buffers buffers(4);
  pipeline(buffers);
  const KernelChoice tuned = *scale.last_tuning();
  EXPECT_FALSE(tuned.candidates[0].failed) << tuned.candidates[0].error;
  EXPECT_EQ(tuned.candidates[0].samples, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(tuned.best, 0u);
  // Round 1 (3 + 3 runs), the re-take round (1 timed run of config 0), the final run.
  EXPECT_EQ(pipeline.tuner().outer_runs(), 3 + 3 + 1 + 1);
  EXPECT_EQ(ran, (std::vector<int>{1, 1, 1, 2, 2, 2, 1, 1}));
}

TEST_F(Context, AFailureAtANewKernelsFirstLaunchIsKept) {
  std::vector<int> ran0, ran1;
  Kernel scale = make_scale({{1, 1.0}, {4, 2.0}}, ran0);
  Kernel reduce = make_reduce({{2, 1.0, true}, {8, 3.0}}, ran1);
  Buffers buffers(12);
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        scale(b.x, b.y);
        reduce(b.y, b.partial);
        return std::accumulate(b.partial.begin(), b.partial.end(), 0.0);
      },
      options(1, 1));
  EXPECT_EQ(pipeline(buffers), buffers.expected_sum());
  EXPECT_EQ(reduce.best_config()->block, 8);
  EXPECT_EQ(scale.best_config()->block, 1);
  EXPECT_EQ(std::count(ran1.begin(), ran1.end(), 2), 1);
}

TEST_F(Context, WhenEveryConfigFailsTheErrorSaysWhyAndTheTunerIsUsableAgain) {
  std::vector<int> ran;
  Kernel broken = make_scale({{1, 1.0, true}, {2, 1.0, true}}, ran);
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { broken(b.x, b.y); }, options(1, 1));
  Buffers buffers(4);
  try {
    pipeline(buffers);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("every config of kernel 'scale' failed"), std::string::npos) << what;
    EXPECT_NE(what.find("block 2 is out of resources"), std::string::npos) << what;
    EXPECT_NE(what.find("\n  each failure in full (tracebacks too) is in the log "), std::string::npos) << what;
    EXPECT_NE(what.find("rank-0.log"), std::string::npos) << what;
  }
  EXPECT_EQ(ContextualAutotuner::active(), nullptr);
  std::vector<int> ran_ok;
  Kernel working = make_scale({{1, 1.0}, {2, 2.0}}, ran_ok);
  auto again = make_contextual("again", [&](Buffers& b) { working(b.x, b.y); }, options(1, 1));
  again(buffers);
  EXPECT_EQ(working.best_config()->block, 1);
}

TEST_F(Context, AnErrorOfTheOuterFunctionPropagatesAndTheTunerStaysUsable) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 1.0}, {2, 2.0}}, ran);
  int calls = 0;
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        scale(b.x, b.y);
        if (++calls == 2) throw std::domain_error("bad input");
      },
      options(1, 1));
  Buffers buffers(4);
  EXPECT_THROW(pipeline(buffers), std::domain_error);
  EXPECT_EQ(ContextualAutotuner::active(), nullptr);
  EXPECT_FALSE(scale.best_config());
  pipeline(buffers);
  EXPECT_EQ(scale.best_config()->block, 1);
}

TEST_F(Context, NestingIsRejectedAndBothTunersWorkAfterwards) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 1.0}, {2, 2.0}}, ran);
  auto inner = make_contextual("inner", [&](Buffers& b) { scale(b.x, b.y); }, options(1, 1));
  auto outer = make_contextual("outer", [&](Buffers& b) { inner(b); }, options(1, 1));
  Buffers buffers(4);
  try {
    outer(buffers);
    FAIL() << "nesting must be rejected";
  } catch (const ContextualRunActive& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("cannot start contextual tuning of 'inner'"), std::string::npos) << what;
    EXPECT_NE(what.find("'outer' is running"), std::string::npos) << what;
  }
  EXPECT_EQ(ContextualAutotuner::active(), nullptr);
  inner(buffers);
  EXPECT_EQ(scale.best_config()->block, 1);
  auto plain = make_contextual("outer", [&](Buffers& b) { scale(b.x, b.y); }, options(1, 1));
  plain(buffers);
  EXPECT_EQ(plain.tuner().outer_runs(), 1);
}

TEST_F(Context, ConcurrentUseIsRejected) {
  std::barrier both(2);
  auto slow = make_contextual(
      "slow",
      [&] {
        both.arrive_and_wait();  // the other thread may try now
        both.arrive_and_wait();  // it has tried
      },
      options(1, 1));
  auto other = make_contextual("other", [] {}, options(1, 1));
  std::thread runner([&] { slow(); });
  both.arrive_and_wait();
  EXPECT_THROW(other(), ContextualRunActive);
  both.arrive_and_wait();
  runner.join();
  EXPECT_NO_THROW(other());
}

TEST_F(Context, AKernelDestroyedWhileItsKeyIsTunedIsAnError) {
  std::vector<int> ran;
  auto pipeline = make_contextual(
      "pipeline",
      [&](Buffers& b) {
        Kernel local = make_scale({{1, 1.0}, {2, 2.0}}, ran);  // a new kernel in every run
        local(b.x, b.y);
      },
      options(1, 1));
  Buffers buffers(4);
  try {
    pipeline(buffers);
    FAIL() << "expected an error";
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("kernel 'scale' was destroyed during contextual tuning"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(ran.size(), 1u);
  EXPECT_EQ(ContextualAutotuner::active(), nullptr);
}

TEST_F(Context, OutsideARunAKernelTunesInIsolationAndRunsUseItsCache) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 3.0}, {2, 1.0}, {4, 2.0}}, ran);
  Buffers buffers(8);
  scale(buffers.x, buffers.y);
  EXPECT_EQ(buffers.y.back(), 16.0);
  EXPECT_EQ(scale.best_config()->block, 2);
  // Function-level defaults: 5 warm-up and 10 timed runs each, then the best once more.
  EXPECT_EQ(ran.size(), 3u * 15u + 1u);
  EXPECT_EQ(scale.last_tuning()->candidates[2].samples.size(), 10u);
  ran.clear();
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { scale(b.x, b.y); }, options(1, 1));
  pipeline(buffers);
  EXPECT_EQ(pipeline.tuner().outer_runs(), 1);
  EXPECT_EQ(ran, std::vector<int>{2});
}

TEST_F(Context, ASingleConfigIsUsedWithoutTuning) {
  std::vector<int> ran;
  Kernel scale = make_scale({{4, 1.0}}, ran);
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { scale(b.x, b.y); }, options(3, 5));
  Buffers buffers(8);
  pipeline(buffers);
  EXPECT_EQ(pipeline.tuner().outer_runs(), 1);
  EXPECT_EQ(scale.best_config()->block, 4);
}

TEST_F(Context, TheLogNamesEveryStepAndTheChoiceAndIsAppended) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 1.5}, {4, 0.25}}, ran);
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) { scale(b.x, b.y); }, options(1, 2));
  Buffers buffers(8);
  pipeline(buffers);
  EXPECT_EQ(pipeline.tuner().log_path(), log_dir_ / "rank-0.log");
  const std::string log = read_log();
  for (const std::string& line :
       {std::string("[rank-0] function: pipeline | contextual tuning started"),
        std::string("function: pipeline | kernel: scale | key: 8 | config-id: 0 | config: {\"block\":1} | warmup 1/1"),
        std::string("config-id: 1 | config: {\"block\":4} | timed 2/2 | latency: 0.25 ms"),
        std::string("config-id: 0 | config: {\"block\":1} | latency (max over ranks): 1.5 ms"),
        std::string("kernel: scale | key: 8 | best-config-id: 1 | best-config: {\"block\":4} | best-latency: 0.25 ms"),
        std::string("final outer-run: 6 with every best config | outer runs: 7")}) {
    EXPECT_NE(log.find(line), std::string::npos) << "missing: " << line << "\nlog:\n" << log;
  }
  Buffers other(9);
  pipeline(other);
  const std::string appended = read_log();
  EXPECT_EQ(appended.substr(0, log.size()), log);
  EXPECT_NE(appended.find("key: 9 | best-config-id"), std::string::npos);
}

TEST_F(Context, ACallWithEveryKernelTunedLogsNothingButAFailureIsLogged) {
  std::vector<int> ran;
  Kernel scale = make_scale({{1, 1.5}, {4, 0.25}}, ran);
  bool fail = false;
  auto pipeline = make_contextual("pipeline", [&](Buffers& b) {
    scale(b.x, b.y);
    if (fail) throw std::runtime_error("outer broke");
  }, options(1, 1));
  Buffers buffers(8);
  pipeline(buffers);
  const std::string tuned = read_log();
  ASSERT_NE(tuned.find("final outer-run"), std::string::npos) << tuned;
  ran.clear();
  for (int call = 0; call < 3; ++call) pipeline(buffers);
  EXPECT_EQ(ran, (std::vector<int>{4, 4, 4}));  // the choice ran once per call
  EXPECT_EQ(read_log(), tuned);                 // and the log did not grow
  fail = true;
  EXPECT_THROW(pipeline(buffers), std::runtime_error);
  const std::string failed = read_log();
  ASSERT_EQ(failed.substr(0, tuned.size()), tuned);
  const std::string added = failed.substr(tuned.size());
  EXPECT_EQ(added.rfind("[rank-0] function: pipeline | contextual tuning started", 0), 0u) << added;
  EXPECT_NE(added.find("contextual tuning stopped in outer run 0: "), std::string::npos) << added;
  EXPECT_EQ(added.find("final outer-run"), std::string::npos) << added;
}

TEST_F(Context, LaunchOutsideItsRunAndBadOptionsAreErrors) {
  ContextualAutotuner tuner("f", options(1, 1));
  KernelTuningState kernel("k");
  EXPECT_THROW(tuner.launch(kernel, "1", {"{}", "[]"}, [](std::size_t) {}), std::logic_error);
  EXPECT_THROW(ContextualAutotuner("f", options(1, 0)), std::invalid_argument);
  EXPECT_THROW(ContextualAutotuner("f", options(-1, 1)), std::invalid_argument);
  EXPECT_THROW(ContextualAutotuner("", options(1, 1)), std::invalid_argument);
  ContextOptions dist = options(1, 1);
  dist.is_dist = true;
  EXPECT_THROW(ContextualAutotuner("f", dist), std::invalid_argument);
  EXPECT_THROW(KernelTuningState(""), std::invalid_argument);
}

TEST_F(Context, RanksCompareWhetherTheirTimersFlushL2) {
  // Rank 0 of two whose peer mirrors it, except that in the digest check the peer sends
  // `peer` when that is set; this rank's digest-check parts are kept in `mine`.
  std::vector<std::string> mine;
  std::optional<std::string> peer;
  CommunicatorCallbacks callbacks;
  callbacks.rank = 0;
  callbacks.size = 2;
  callbacks.barrier = [](const CollectiveContext&) {};
  callbacks.all_reduce_max = [](std::span<double>, const CollectiveContext&) {};
  callbacks.all_gather = [&](const std::string& bytes, const CollectiveContext& context) {
    if (context.phase != "digest check") return std::vector<std::string>{bytes, bytes};
    mine.push_back(bytes);
    return std::vector<std::string>{bytes, peer.value_or(bytes)};
  };
  ContextOptions o = options(1, 1);
  o.is_dist = true;
  o.communicator = make_callback_communicator(std::move(callbacks));
  const std::vector<std::string> candidates{R"({"w":4})", R"({"w":8})"};
  auto tune = [&] {
    KernelTuningState kernel("k");
    ContextualAutotuner tuner("outer", o);
    tuner.run([&] {
      (void)ContextualAutotuner::active()->launch(kernel, "[1]", candidates, [](std::size_t) {});
    });
  };

  tune();  // the timer does not flush, and neither does the peer's
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_NE(mine.front().find(R"("flush_l2":false)"), std::string::npos) << mine.front();

  peer = mine.front();
  timer_->flushes = true;  // now this rank's timer flushes and the peer's does not
  try {
    tune();
    FAIL() << "ranks whose timers differ in flushing L2 must not tune together";
  } catch (const RankDisagreement& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("rank 1 differs from rank 0 in measurement.flush_l2: false vs true"), std::string::npos)
        << what;
  }
}

TEST_F(Context, TheEngineApiDrivesAKernelWithoutTheTemplates) {
  // What a binding does: a kernel state, candidates as JSON, a launch callback.
  KernelTuningState kernel("bound");
  const std::vector<std::string> candidates{R"({"w":4})", R"({"w":8})"};
  std::vector<std::size_t> used;
  ContextualAutotuner tuner("bound_outer", options(1, 1));
  tuner.run([&] {
    used.push_back(ContextualAutotuner::active()->launch(kernel, "[1024]", candidates, [&](std::size_t i) {
      timer_->next_ms = i == 0 ? 2.0 : 1.0;
    }));
  });
  EXPECT_EQ(used, (std::vector<std::size_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(kernel.cached_index("[1024]", candidates), 1u);
  EXPECT_EQ(kernel.cached_index("[1024]", {R"({"w":8})"}), 0u);  // found by its config
  EXPECT_FALSE(kernel.cached_index("[1024]", {R"({"w":4})"}));
  EXPECT_FALSE(kernel.cached_index("[2048]", candidates));
  EXPECT_EQ(ContextualAutotuner::active(), nullptr);
}

}  // namespace
}  // namespace disttune
