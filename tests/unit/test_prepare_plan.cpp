// Preparing candidates ahead (src/engine/prepare_plan.cpp, through RoundDriver and FunctionTuner).
#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/function_tuner.hpp"
#include "disttune/report.hpp"
#include "disttune/tuning.hpp"
#include "engine/prepare_plan.hpp"
#include "said_timer.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

using Indices = std::vector<std::size_t>;
using testing::SaidTimer;

/// One prepare call as the hook saw it.
struct PrepareCall {
  Indices now;
  Indices ahead;
};

std::vector<std::string> candidates(std::size_t count) {
  std::vector<std::string> list;
  for (std::size_t i = 0; i < count; ++i) list.push_back("{\"id\":" + std::to_string(i) + "}");
  return list;
}

Measurement exhaustive() {
  Measurement m;
  m.warmup_runs = 1;
  m.timed_runs = 2;
  m.strategy = "exhaustive";
  return m;
}

/// A hook that records its calls and fails the candidates in `broken`.
detail::PrepareHook recording(std::vector<PrepareCall>& calls, Indices broken = {}) {
  return [&calls, broken](std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
    calls.push_back({Indices(now.begin(), now.end()), Indices(ahead.begin(), ahead.end())});
    std::vector<std::string> reasons;
    for (std::size_t c : now) {
      const bool bad = std::find(broken.begin(), broken.end(), c) != broken.end();
      reasons.push_back(bad ? "out of resources: shared memory" : "");
    }
    return reasons;
  };
}

TEST(PreparePlan, ChunksComeFromTheRoundsIndexListAndTheRestIsAhead) {
  Tuning tuning(candidates(7), exhaustive());
  std::vector<PrepareCall> calls;
  detail::PreparePlan plan(recording(calls, {4}), 7, 3);
  EXPECT_EQ(plan.ready(tuning, 0), "");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].now, (Indices{0, 1, 2}));
  EXPECT_EQ(calls[0].ahead, (Indices{3, 4, 5, 6}));
  EXPECT_EQ(plan.ready(tuning, 2), "");  // prepared with its chunk: no call
  EXPECT_EQ(calls.size(), 1u);
  EXPECT_EQ(plan.ready(tuning, 4), "out of resources: shared memory");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].now, (Indices{3, 4, 5}));  // the chunk of 4, not "what is ready"
  EXPECT_TRUE(calls[1].ahead.empty());           // 6 was named ahead before
  EXPECT_EQ(plan.ready(tuning, 4), "out of resources: shared memory");  // remembered
  EXPECT_EQ(plan.ready(tuning, 6), "");
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].now, (Indices{6}));
  EXPECT_TRUE(calls[2].ahead.empty());
}

/// Measures candidates 0 and 1, and expects to want 3, then 1 and 2 next.
class LooksAhead final : public Strategy {
 public:
  Round first_round(std::size_t) override { return {{0, 1}, 0, 1}; }
  Round next_round(const std::vector<CandidateStanding>&) override { return {{0, 1}, 0, 0}; }
  std::vector<std::size_t> ahead() const override { return {3, 1, 2, 9}; }
};

TEST(PreparePlan, TheStrategysAheadFollowsTheRestOfTheRound) {
  const std::vector<std::string> known = registered_strategies();
  if (std::find(known.begin(), known.end(), "looks-ahead") == known.end()) {
    register_strategy("looks-ahead", [](const Measurement&) { return std::make_unique<LooksAhead>(); });
  }
  Measurement measurement;
  measurement.strategy = "looks-ahead";
  Tuning tuning(candidates(5), measurement);
  std::vector<PrepareCall> calls;
  detail::PreparePlan plan(recording(calls), 5);
  EXPECT_EQ(plan.ready(tuning, 0), "");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].now, Indices{0});
  // The round's rest first, then the strategy's guesses not named yet (9 is no candidate).
  EXPECT_EQ(calls[0].ahead, (Indices{1, 3, 2}));
}

TEST(PreparePlan, AHookThatThrowsOrMiscountsFailsItsWholeChunk) {
  Tuning tuning(candidates(4), exhaustive());
  detail::PreparePlan throwing(
      [](std::span<const std::size_t>, std::span<const std::size_t>) -> std::vector<std::string> {
        throw std::runtime_error("compiler crashed");
      },
      4, 2);
  EXPECT_EQ(throwing.ready(tuning, 1), "prepare: compiler crashed");
  EXPECT_EQ(throwing.ready(tuning, 0), "prepare: compiler crashed");
  detail::PreparePlan miscounting(
      [](std::span<const std::size_t>, std::span<const std::size_t>) { return std::vector<std::string>{""}; }, 4,
      2);
  EXPECT_EQ(miscounting.ready(tuning, 0), "prepare: answered 1 entries for 2 candidates");
  std::vector<PrepareCall> calls;
  EXPECT_THROW(detail::PreparePlan(nullptr, 4), std::invalid_argument);
  EXPECT_THROW(detail::PreparePlan(recording(calls), 4, 0), std::invalid_argument);
}

/// A FunctionTuner with a fake compile: counts prepares per candidate and checks that no
/// candidate runs before it was prepared.
struct FakeCompile {
  std::vector<int> prepared;
  std::vector<int> runs;
  std::vector<PrepareCall> calls;
  std::vector<std::size_t> run_before_prepare;
  Indices broken;

  explicit FakeCompile(std::size_t count) : prepared(count, 0), runs(count, 0) {}

  TuningRequest request(std::size_t count, const std::vector<double>& costs, SaidTimer& timer) {
    TuningRequest request;
    request.key = "[1]";
    request.candidates = candidates(count);
    request.run = [this, &costs, &timer](std::size_t i) {
      ++runs[i];
      if (prepared[i] == 0) run_before_prepare.push_back(i);
      timer.said_ms = costs[i];
    };
    request.prepare = [this](std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
      calls.push_back({Indices(now.begin(), now.end()), Indices(ahead.begin(), ahead.end())});
      std::vector<std::string> reasons;
      for (std::size_t c : now) {
        ++prepared[c];
        const bool bad = std::find(broken.begin(), broken.end(), c) != broken.end();
        reasons.push_back(bad ? "out of resources: shared memory 300000 > 232448" : "");
      }
      return reasons;
    };
    return request;
  }
};

TuningReport tune_alone(Measurement measurement, const std::vector<double>& costs, FakeCompile& compile) {
  auto timer = std::make_shared<SaidTimer>();
  TunerOptions options;
  options.measurement = measurement;
  options.timer = timer;
  options.disk_cache = false;
  FunctionTuner tuner({"prepared_fn", "v1"}, options);
  return tuner.resolve(compile.request(costs.size(), costs, *timer));
}

TEST(PrepareThroughTheTuner, EveryRunIsPreparedOnceAndAFailedPrepareFailsOnlyItsCandidate) {
  const std::vector<double> costs = {5.0, 4.0, 1.0, 3.0, 2.0};
  FakeCompile compile(costs.size());
  compile.broken = {2};
  const TuningReport report = tune_alone(exhaustive(), costs, compile);
  EXPECT_TRUE(compile.run_before_prepare.empty());
  EXPECT_EQ(compile.prepared, (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_EQ(compile.runs, (std::vector<int>{3, 3, 0, 3, 3}));  // the failed one never runs
  EXPECT_TRUE(report.candidates[2].failed);
  EXPECT_EQ(report.candidates[2].error, "out of resources: shared memory 300000 > 232448");
  EXPECT_EQ(report.best, 4u);
  EXPECT_EQ(report.prepared, 5u);  // compiled against measured, in the report and the table
  EXPECT_NE(format_table(report).find("compiled 5, measured 5 of 5 candidates"), std::string::npos);
  // One candidate per call, in the round's order, the rest of the round ahead.
  ASSERT_EQ(compile.calls.size(), 5u);
  EXPECT_EQ(compile.calls[0].now, Indices{0});
  EXPECT_EQ(compile.calls[0].ahead, (Indices{1, 2, 3, 4}));
  EXPECT_EQ(compile.calls[3].now, Indices{3});
  EXPECT_TRUE(compile.calls[3].ahead.empty());  // each is named ahead once
}

TEST(PrepareThroughTheTuner, LaterRoundsNeverPrepareAgain) {
  std::vector<double> costs;
  // Three near ties survive a first round; the others are clearly slower.
  for (int i = 0; i < 12; ++i) costs.push_back(i < 3 ? 1.0 + 0.001 * i : 2.0 + 0.1 * i);
  for (const char* strategy : {"adaptive", "converge"}) {
    FakeCompile compile(costs.size());
    Measurement measurement;
    measurement.strategy = strategy;
    const TuningReport report = tune_alone(measurement, costs, compile);
    EXPECT_TRUE(compile.run_before_prepare.empty()) << strategy;
    EXPECT_EQ(compile.prepared, std::vector<int>(costs.size(), 1)) << strategy;
    EXPECT_EQ(report.best, 0u) << strategy;  // 1.0 ms
    if (std::string(strategy) == "adaptive") {  // the survivor got later rounds
      EXPECT_GT(compile.runs[0], compile.runs[11]) << strategy;
    }
  }
}

/// Entries the hook was handed over a tuning, `now` and `ahead` apart.
struct NamedEntries {
  std::size_t now = 0;
  std::size_t ahead = 0;
};

NamedEntries named_entries(const std::vector<PrepareCall>& calls) {
  NamedEntries sum;
  for (const PrepareCall& call : calls) {
    sum.now += call.now.size();
    sum.ahead += call.ahead.size();
  }
  return sum;
}

// Issue 38: the plan re-read the whole round and re-sent its rest as `ahead` at every
// candidate, O(n^2) entries handed to the hook (a Python precompile hook paid 8.65 s for
// them at 4,000 configs) and O(n^3) work. One round of every candidate, as exhaustive runs
// it: each candidate reaches the hook at most twice (once ahead, once now).
TEST(PrepareWork, OneRoundOfTheWholeSpaceNamesEachCandidateAtMostTwice) {
  const std::size_t count = 1000;
  FakeCompile compile(count);
  const TuningReport report = tune_alone(exhaustive(), std::vector<double>(count, 1.0), compile);
  EXPECT_EQ(report.best, 0u);
  EXPECT_EQ(compile.prepared, std::vector<int>(count, 1));
  EXPECT_EQ(compile.calls.size(), count);  // one candidate per call
  const NamedEntries named = named_entries(compile.calls);
  EXPECT_EQ(named.now, count);
  EXPECT_EQ(named.ahead, count - 1);  // every candidate but the first, at the first call
}

/// Walks the space in rounds of kWalkRound candidates; ahead() names the kWalkAhead after
/// the round, and counts how often it is asked.
constexpr std::size_t kWalkRound = 50;
constexpr std::size_t kWalkAhead = 200;
std::size_t walk_ahead_asked = 0;

class Walk final : public Strategy {
 public:
  Round first_round(std::size_t count) override {
    count_ = count;
    return round();
  }
  Round next_round(const std::vector<CandidateStanding>&) override {
    start_ += kWalkRound;
    return start_ < count_ ? round() : Round{{0}, 0, 0};  // the end: candidate 0 is the choice
  }
  std::vector<std::size_t> ahead() const override {
    ++walk_ahead_asked;
    Indices next;
    for (std::size_t c = start_ + kWalkRound; c < std::min(count_, start_ + kWalkRound + kWalkAhead); ++c)
      next.push_back(c);
    return next;
  }

 private:
  Round round() const {
    Indices members;
    for (std::size_t c = start_; c < std::min(count_, start_ + kWalkRound); ++c) members.push_back(c);
    return Round{std::move(members), 0, 1};
  }
  std::size_t count_ = 0;
  std::size_t start_ = 0;
};

// Many rounds, each with a long ahead(): the strategy is asked once per round, and what the
// hook is handed stays within twice the space, whatever the rounds and their aheads.
TEST(PrepareWork, ManyRoundsAskTheStrategyOncePerRoundAndNameEachCandidateAtMostTwice) {
  const std::vector<std::string> known = registered_strategies();
  if (std::find(known.begin(), known.end(), "walk") == known.end()) {
    register_strategy("walk", [](const Measurement&) { return std::make_unique<Walk>(); });
  }
  const std::size_t count = 4000;
  Measurement measurement;
  measurement.strategy = "walk";
  FakeCompile compile(count);
  walk_ahead_asked = 0;
  const TuningReport report = tune_alone(measurement, std::vector<double>(count, 1.0), compile);
  EXPECT_EQ(report.best, 0u);
  EXPECT_TRUE(compile.run_before_prepare.empty());
  EXPECT_EQ(compile.prepared, std::vector<int>(count, 1));
  const std::size_t rounds = count / kWalkRound;
  EXPECT_LE(walk_ahead_asked, rounds);
  const NamedEntries named = named_entries(compile.calls);
  EXPECT_EQ(named.now, count);
  EXPECT_LE(named.ahead, count);
}

/// A cost model of a compile pool and a device: `threads` compile in parallel, each
/// candidate taking compile_s[c], started in the order they are first named (now, then
/// ahead); prepare returns when `now` is compiled; a run takes run_s on the device.
struct PipelineModel {
  std::vector<double> compile_s;
  double run_s = 0.01;
  int threads = 4;
  double clock = 0.0;
  std::vector<double> thread_free;
  std::vector<double> done;      ///< when each candidate's compile ends; < 0: not started
  int runs = 0;
  double first_run = -1.0;

  PipelineModel(std::vector<double> compile, int pool)
      : compile_s(std::move(compile)), threads(pool), thread_free(static_cast<std::size_t>(pool), 0.0),
        done(compile_s.size(), -1.0) {}

  void start(std::size_t c) {
    if (done[c] >= 0.0) return;
    auto thread = std::min_element(thread_free.begin(), thread_free.end());
    const double begin = std::max(*thread, clock);
    *thread = begin + compile_s[c];
    done[c] = *thread;
  }
  std::vector<std::string> prepare(std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
    for (std::size_t c : now) start(c);
    for (std::size_t c : ahead) start(c);
    for (std::size_t c : now) clock = std::max(clock, done[c]);
    return std::vector<std::string>(now.size());
  }
  void run() {
    if (first_run < 0.0) first_run = clock;
    clock += run_s;
    ++runs;
  }
};

TEST(PrepareThroughTheTuner, MeasuringStartsWithTheFirstCompiledCandidateNotAfterAll) {
  const std::size_t count = 64;
  std::vector<double> compile_s;
  for (std::size_t i = 0; i < count; ++i) compile_s.push_back(0.5 + 0.5 * static_cast<double>(i % 3));
  PipelineModel model(compile_s, 8);
  auto timer = std::make_shared<SaidTimer>();
  TunerOptions options;
  options.measurement = exhaustive();
  options.timer = timer;
  options.disk_cache = false;
  FunctionTuner tuner({"pipelined_fn", "v1"}, options);
  TuningRequest request;
  request.key = "[1]";
  request.candidates = candidates(count);
  request.run = [&](std::size_t i) {
    model.run();
    timer->said_ms = 1.0 + static_cast<double>(i);
  };
  request.prepare = [&](std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
    return model.prepare(now, ahead);
  };
  EXPECT_EQ(tuner.resolve(request).best, 0u);
  const auto last = std::max_element(model.done.begin(), model.done.end());
  const double compile_all = *last;
  const auto after_last = static_cast<double>(model.done.end() - last);  // the last compile's candidate on
  EXPECT_DOUBLE_EQ(model.first_run, compile_s[0]);  // the first compile, not all of them
  // Compile and measurement overlap: once the last compile ends, only the runs of that
  // candidate and the ones after it in the round remain (compile everything, then measure
  // everything would end at compile_all + count * 3 * run_s).
  EXPECT_NEAR(model.clock, compile_all + after_last * 3 * model.run_s, 1e-9);
  EXPECT_LT(after_last, 8.0);
  EXPECT_EQ(model.runs, static_cast<int>(count) * 3);
}

/// Tunes on `ranks` simulated ranks; `broken[r]` are the candidates rank r cannot prepare.
struct RankRun {
  TuningReport report;
  std::string error;
  std::vector<PrepareCall> calls;
  std::vector<int> prepared;
  std::vector<int> runs;
};

std::vector<RankRun> tune_ranks(int ranks, bool split, const std::vector<Indices>& broken) {
  const std::vector<double> costs = {5.0, 4.0, 1.0, 3.0, 2.0, 6.0};
  simulation::LockstepRanks lockstep(ranks);
  std::vector<RankRun> out(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      RankRun& mine = out[static_cast<std::size_t>(r)];
      FakeCompile compile(costs.size());
      compile.broken = broken[static_cast<std::size_t>(r)];
      try {
        auto timer = std::make_shared<SaidTimer>();
        TunerOptions options;
        options.measurement = exhaustive();
        options.timer = timer;
        options.communicator = std::make_shared<simulation::LockstepRanks::Rank>(lockstep, r);
        options.split_across_ranks = split;
        options.disk_cache = false;
        FunctionTuner tuner({"ranked_fn", "v1"}, options);
        mine.report = tuner.resolve(compile.request(costs.size(), costs, *timer));
      } catch (const std::exception& error) {
        mine.error = error.what();
      }
      mine.calls = compile.calls;
      mine.prepared = compile.prepared;
      mine.runs = compile.runs;
      lockstep.leave(r);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return out;
}

TEST(PrepareAcrossRanks, EveryRankPreparesTheSameChunksAndAFailureOnOneFailsItEverywhere) {
  const std::vector<RankRun> runs = tune_ranks(2, false, {{}, {2}});
  for (const RankRun& run : runs) {
    ASSERT_EQ(run.error, "");
    EXPECT_TRUE(run.report.candidates[2].failed);
    EXPECT_EQ(run.report.best, 4u);
    EXPECT_EQ(run.prepared, std::vector<int>(6, 1));
  }
  EXPECT_EQ(runs[1].report.candidates[2].error, "out of resources: shared memory 300000 > 232448");
  EXPECT_EQ(runs[0].report.candidates[2].error, "failed on another rank");
  ASSERT_EQ(runs[0].calls.size(), runs[1].calls.size());
  for (std::size_t i = 0; i < runs[0].calls.size(); ++i) EXPECT_EQ(runs[0].calls[i].now, runs[1].calls[i].now);
}

TEST(PrepareAcrossRanks, SplitRanksPrepareOnlyTheirShareInWholeSpaceIndices) {
  const std::vector<RankRun> runs = tune_ranks(2, true, {{}, {3}});
  for (int r = 0; r < 2; ++r) {
    const RankRun& run = runs[static_cast<std::size_t>(r)];
    ASSERT_EQ(run.error, "");
    EXPECT_EQ(run.report.best, 2u);
    EXPECT_TRUE(run.report.candidates[3].failed);
    EXPECT_EQ(run.report.candidates[3].error, "on rank 1: out of resources: shared memory 300000 > 232448");
    for (std::size_t c = 0; c < 6; ++c) {
      EXPECT_EQ(run.prepared[c], static_cast<int>(c % 2) == r ? 1 : 0) << "rank " << r << " candidate " << c;
    }
    for (const PrepareCall& call : run.calls) {
      for (std::size_t c : call.ahead) EXPECT_EQ(static_cast<int>(c % 2), r);
    }
  }
  EXPECT_EQ(runs[0].calls[0].ahead, (Indices{2, 4}));
}

}  // namespace
}  // namespace disttune
