// Tests of the round driver (src/engine/round_driver.cpp): batches, timer mismatches, the barrier schedule.
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/communicator.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/strategy.hpp"
#include "disttune/tuning.hpp"
#include "engine/round_driver.hpp"
#include "keeps_compile_threads.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

/// Times a phase as one batch (as a CUDA-graph replay would): runs it `runs` times, returns
/// `batch_ms` each. Pairs outside batches take `pair_ms`; `short_collects` drops a sample.
class BatchingTimer final : public Timer {
 public:
  void start() override {}
  void stop() override {
    if (!std::exchange(drop_next_stop, false)) pairs_.push_back(pair_ms);
  }
  bool holds_pairs_across_candidates() const override { return holds_pairs; }
  std::vector<double> collect() override {
    ++collects;
    if (throw_at_collect) throw std::runtime_error("device lost");
    std::vector<double> samples = std::exchange(pairs_, {});
    if (short_collects && !samples.empty()) samples.pop_back();
    return samples;
  }
  std::optional<std::vector<double>> time_batch(const std::function<void()>& run, int runs) override {
    if (!batches) return std::nullopt;
    for (int i = 0; i < runs; ++i) run();
    ++batches_made;
    return std::vector<double>(static_cast<std::size_t>(runs), batch_ms);
  }
  std::string name() const override { return "batching"; }

  bool batches = true;
  bool short_collects = false;
  bool throw_at_collect = false;
  bool holds_pairs = true;
  bool drop_next_stop = false;  ///< the next pair leaves no time (as a worker that died)
  int collects = 0;  ///< collect() calls
  double batch_ms = 2.0;
  double pair_ms = 3.0;
  int batches_made = 0;

 private:
  std::vector<double> pairs_;
};

/// `fail_at(candidate, run)` may throw to fail that run.
TuningReport tune(const std::shared_ptr<BatchingTimer>& timer, std::vector<int>& runs,
                  const std::function<void(std::size_t, int)>& fail_at = {}) {
  TunerOptions options;
  options.measurement.warmup_runs = 2;
  options.measurement.timed_runs = 4;
  options.measurement.strategy = "exhaustive";  // the run counts below follow 2 + 4
  options.timer = timer;
  options.disk_cache = false;
  FunctionTuner tuner({"driven", "v1"}, options);
  runs.assign(2, 0);
  TuningRequest request{"[1]", {"0", "1"}, [&](std::size_t i) {
                          if (fail_at) fail_at(i, runs[i]);
                          ++runs[i];
                        }, false, nullptr, {}, {}, {}, {}};
  return tuner.resolve(request);
}

TEST(RoundDriver, ABatchStandsForAPhasesTimedRuns) {
  auto timer = std::make_shared<BatchingTimer>();
  std::vector<int> runs;
  const TuningReport report = tune(timer, runs);
  EXPECT_EQ(timer->batches_made, 2);
  EXPECT_EQ(runs, (std::vector<int>{2 + 4, 2 + 4}));  // warm-ups, then the batch's runs
  EXPECT_EQ(report.candidates[0].samples, (std::vector<double>(4, 2.0)));
}

TEST(RoundDriver, ATimerThatReturnsTooFewTimesFailsTheCandidate) {
  auto timer = std::make_shared<BatchingTimer>();
  timer->batches = false;
  timer->short_collects = true;
  std::vector<int> runs;
  try {
    (void)tune(timer, runs);
    FAIL() << "a short collect was accepted";
  } catch (const std::runtime_error& error) {
    // One collect for the round: both candidates' 8 pairs at once.
    const std::string message = error.what();
    EXPECT_NE(message.find("[0] 0: timer: returned 7 times for 8 timed runs"), std::string::npos) << message;
    EXPECT_NE(message.find("[1] 1: timer: returned 7 times for 8 timed runs"), std::string::npos) << message;
  }
}

TEST(RoundDriver, ARoundIsCollectedWithOneWait) {
  auto timer = std::make_shared<BatchingTimer>();
  timer->batches = false;
  std::vector<int> runs;
  const TuningReport report = tune(timer, runs);
  EXPECT_EQ(timer->collects, 1);  // one round of 2 candidates (exhaustive), collected at its end
  EXPECT_EQ(runs, (std::vector<int>{2 + 4, 2 + 4}));
  for (const CandidateResult& candidate : report.candidates) {
    EXPECT_EQ(candidate.samples, (std::vector<double>(4, 3.0)));
  }
}

TEST(RoundDriver, ATimerThatThrowsAtTheRoundsCollectFailsEveryCandidateOfTheRound) {
  auto timer = std::make_shared<BatchingTimer>();
  timer->batches = false;
  timer->throw_at_collect = true;
  std::vector<int> runs;
  try {
    (void)tune(timer, runs);
    FAIL() << "a throwing collect was accepted";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("[0] 0: timer: device lost"), std::string::npos) << message;
    EXPECT_NE(message.find("[1] 1: timer: device lost"), std::string::npos) << message;
  }
  EXPECT_EQ(timer->collects, 1);
}

TEST(RoundDriver, ATimerThatCannotHoldPairsAcrossCandidatesIsCollectedPerCandidate) {
  auto timer = std::make_shared<BatchingTimer>();
  timer->batches = false;
  timer->holds_pairs = false;
  std::vector<int> runs;
  const TuningReport report = tune(timer, runs);
  EXPECT_EQ(timer->collects, 2);  // before candidate 1's first run, and at the round's end
  EXPECT_EQ(report.candidates[0].samples, (std::vector<double>(4, 3.0)));
  EXPECT_EQ(report.candidates[1].samples, (std::vector<double>(4, 3.0)));
}

TEST(RoundDriver, ARunThatFailsWithoutATimeFailsOnlyItsCandidate) {
  auto timer = std::make_shared<BatchingTimer>();
  timer->batches = false;
  std::vector<int> runs;
  // Candidate 1's third timed run (run 2 + 2 of its runs) dies and leaves no time.
  const TuningReport report = tune(timer, runs, [&](std::size_t candidate, int run) {
    if (candidate == 1 && run == 4) {
      timer->drop_next_stop = true;
      throw std::runtime_error("worker died");
    }
  });
  EXPECT_FALSE(report.candidates[0].failed);
  EXPECT_EQ(report.candidates[0].samples, (std::vector<double>(4, 3.0)));
  EXPECT_TRUE(report.candidates[1].failed);
  EXPECT_EQ(report.candidates[1].error, "worker died");
  EXPECT_EQ(report.best, 0u);
}

/// Rank 0 of 2 whose peer always agrees; `barriers` counts the barriers it made.
std::unique_ptr<Communicator> counting_peer(int& barriers) {
  CommunicatorCallbacks callbacks;
  callbacks.rank = 0;
  callbacks.size = 2;
  callbacks.barrier = [&barriers](const CollectiveContext& context) {
    EXPECT_EQ(context.phase, "barrier before timed runs");
    ++barriers;
  };
  callbacks.all_reduce_max = [](std::span<double>, const CollectiveContext&) {};
  callbacks.all_gather = [](const std::string& bytes, const CollectiveContext&) {
    return std::vector<std::string>{bytes, bytes};
  };
  return make_callback_communicator(std::move(callbacks));
}

TEST(RoundDriver, WarmUpsNeedNoBarrierAndEachCandidateMakesOne) {
  int barriers = 0;
  auto comm = counting_peer(barriers);
  Measurement m;
  m.warmup_runs = 1;
  m.timed_runs = 1;
  m.strategy = "exhaustive";  // one warm-up, one timed run each, as traced below
  simulation::ReplaySite site([](std::size_t, int) { return 1.0; }, {});
  Tuning tuning({"0", "1"}, m);
  detail::RoundDriver driver(tuning, *comm, detail::ContextMaker{"f", "[]", std::chrono::seconds(5)}, site, site);
  const std::optional<Step> first = driver.next_run(detail::Barriers::owe);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->kind, StepKind::warmup);
  driver.settle_owed_barriers();
  EXPECT_EQ(barriers, 0);  // nothing owed: the first warm-up needs no barrier
  site.run(*first);
  while (std::optional<Step> step = driver.next_run()) site.run(*step);
  EXPECT_EQ(site.trace(), "w0 B0 t0 w1 B1 t1 c0 c1 end");
  EXPECT_EQ(barriers, 2);  // one per candidate, before its timed runs
  EXPECT_EQ(tuning.best(), 0u);
}

TEST(RoundDriver, OwedBarriersAreMadeWhenSettled) {
  int barriers = 0;
  auto comm = counting_peer(barriers);
  Measurement m;
  m.warmup_runs = 0;
  m.timed_runs = 1;
  m.strategy = "exhaustive";  // no warm-up: the first run is timed, its barrier comes first
  simulation::ReplaySite site([](std::size_t, int) { return 1.0; }, {});
  Tuning tuning({"0"}, m);
  detail::RoundDriver driver(tuning, *comm, detail::ContextMaker{"f", "[]", std::chrono::seconds(5)}, site, site);
  const std::optional<Step> first = driver.next_run(detail::Barriers::owe);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->kind, StepKind::timed);
  EXPECT_EQ(barriers, 0);  // met, not made: owed
  driver.settle_owed_barriers();
  EXPECT_EQ(barriers, 1);
  driver.settle_owed_barriers();
  EXPECT_EQ(barriers, 1);  // settled once
  site.run(*first);
  while (std::optional<Step> step = driver.next_run()) site.run(*step);
  EXPECT_EQ(site.trace(), "B0 t0 c0 end");
  EXPECT_EQ(barriers, 1);
  EXPECT_EQ(tuning.best(), 0u);
}

/// Measures candidates 0 and 1 once, then ends; keeps the standings it was given.
class KeepsStandings final : public Strategy {
 public:
  explicit KeepsStandings(std::vector<CandidateStanding>& seen) : seen_(seen) {}
  Round first_round(std::size_t) override { return Round{{0, 1}, 0, 1}; }
  Round next_round(const std::vector<CandidateStanding>& standings) override {
    seen_ = standings;
    return Round{{0, 1}, 0, 0};
  }

 private:
  std::vector<CandidateStanding>& seen_;
};

/// Times each run 1 ms as a batch; candidate 0 was prepared in 1.5 s, 1 is prepared (time not
/// known), 2 is not prepared (its compile still runs).
class PreparingSite final : public detail::RunSite {
 public:
  std::optional<std::vector<double>> time_batch(std::size_t, int runs) override {
    return std::vector<double>(static_cast<std::size_t>(runs), 1.0);
  }
  std::map<std::size_t, detail::CollectedRuns> collect() override { return {}; }
  std::optional<double> prepared(std::size_t candidate) override {
    if (candidate == 2) return std::nullopt;
    return candidate == 0 ? 1.5 : 0.0;
  }
};

// What the site says of each candidate's preparation at a round's end reaches the strategy's
// standings (agreed in the round's one all-reduce): a search can take what is compiled first.
TEST(RoundDriver, TheStrategySeesWhichCandidatesArePrepared) {
  static std::vector<CandidateStanding> seen;
  register_strategy("test_keeps_standings",
                    [](const Measurement&) { return std::make_unique<KeepsStandings>(seen); });
  Measurement m;
  m.strategy = "test_keeps_standings";
  Tuning tuning({"0", "1", "2"}, m, {});
  SingleProcessCommunicator alone;
  PreparingSite site;
  detail::RoundObserver observer;
  detail::RoundDriver driver(tuning, alone, detail::ContextMaker{"prepared", "[]", std::chrono::minutes(1)}, site,
                             observer);
  driver.drive([](const Step&) {});
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_TRUE(seen[0].prepared);
  EXPECT_DOUBLE_EQ(seen[0].prepare_s, 1.5);
  EXPECT_TRUE(seen[1].prepared);
  EXPECT_DOUBLE_EQ(seen[1].prepare_s, 0.0);
  EXPECT_FALSE(seen[2].prepared);
  EXPECT_DOUBLE_EQ(seen[2].prepare_s, 0.0);
  EXPECT_EQ(tuning.best(), 0u);
  EXPECT_THROW(tuning.agree_preparation({1.0}), std::invalid_argument);
}

// Options of a tuner measured by `strategy` on a BatchingTimer, with no disk store.
TunerOptions batching_options(const std::string& strategy) {
  TunerOptions options;
  options.measurement.strategy = strategy;
  options.timer = std::make_shared<BatchingTimer>();
  options.disk_cache = false;
  return options;
}

// A request for key [1] over the candidates "0", "1", "2", whose runs do nothing.
TuningRequest three_candidates() {
  TuningRequest request;
  request.key = "[1]";
  request.candidates = {"0", "1", "2"};
  request.run = [](std::size_t) {};
  return request;
}

// Through FunctionTuner: the request's `prepared` reaches the strategy's standings.
TEST(RoundDriver, ATunersRequestSaysWhichCandidatesArePrepared) {
  static std::vector<CandidateStanding> seen;
  register_strategy("test_keeps_standings_tuned",
                    [](const Measurement&) { return std::make_unique<KeepsStandings>(seen); });
  FunctionTuner tuner({"prepared_request", "v1"}, batching_options("test_keeps_standings_tuned"));
  TuningRequest request = three_candidates();
  request.prepared = [](std::size_t c) { return c == 2 ? std::nullopt : std::optional<double>(0.25 * static_cast<double>(c + 1)); };
  EXPECT_EQ(tuner.resolve(request).best, 0u);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_TRUE(seen[0].prepared);
  EXPECT_DOUBLE_EQ(seen[0].prepare_s, 0.25);
  EXPECT_DOUBLE_EQ(seen[1].prepare_s, 0.5);
  EXPECT_FALSE(seen[2].prepared);
}

// Through FunctionTuner: the request's compile threads (the front end's pool) reach the
// strategy's SpaceInfo; 16 when the request does not say; a tuning refuses none.
TEST(RoundDriver, ATunersRequestTellsTheStrategyItsCompileThreads) {
  static std::size_t threads = 0;
  register_strategy("test_keeps_compile_threads",
                    [](const Measurement&) { return std::make_unique<testing::KeepsCompileThreads>(threads); });
  FunctionTuner tuner({"compile_threads_request", "v1"}, batching_options("test_keeps_compile_threads"));
  TuningRequest request = three_candidates();
  EXPECT_EQ(tuner.resolve(request).best, 0u);
  EXPECT_EQ(threads, 16u);
  request.key = "[2]";
  request.compile_threads = 3;
  EXPECT_EQ(tuner.resolve(request).best, 0u);
  EXPECT_EQ(threads, 3u);
  Measurement m;
  m.strategy = "test_keeps_compile_threads";
  EXPECT_THROW(Tuning({"0"}, m, {}, 0), std::invalid_argument);
}

/// Measures candidates 0 and 1 in two rounds, keeping the standings at the end of each.
class MeasuresTwice final : public Strategy {
 public:
  explicit MeasuresTwice(std::vector<CandidateStanding>& seen) : seen_(seen) {}
  Round first_round(std::size_t) override { return Round{{0, 1}, 0, 1}; }
  Round next_round(const std::vector<CandidateStanding>& standings) override {
    seen_ = standings;
    return Round{{0, 1}, 0, ++rounds_ < 2 ? 1 : 0};
  }

 private:
  std::vector<CandidateStanding>& seen_;
  int rounds_ = 0;
};

// The request's `prepared` is asked only of candidates named to the prepare hook, and never
// again once it told their seconds (a compile that ended stays ended): a Python answer takes
// the GIL, and asking every candidate at every round's end cost a search over 1,536 configs
// 0.5-2 s of its first call (docs/strategies.md, "Compile cost in the decision").
TEST(RoundDriver, ATunersRequestIsAskedOnlyOfCompilesNamedAndNotSeenEnded) {
  static std::vector<CandidateStanding> seen;
  register_strategy("test_measures_twice", [](const Measurement&) { return std::make_unique<MeasuresTwice>(seen); });
  FunctionTuner tuner({"prepared_asked", "v1"}, batching_options("test_measures_twice"));
  TuningRequest request = three_candidates();
  request.prepare = [](std::span<const std::size_t> now, std::span<const std::size_t>) {
    return std::vector<std::string>(now.size());
  };
  std::map<std::size_t, int> asked;
  request.prepared = [&asked](std::size_t c) {
    // Candidate 1's compile is seen ended only at the second round's end.
    return ++asked[c] == 1 && c == 1 ? std::nullopt : std::optional<double>(0.5);
  };
  (void)tuner.resolve(request);
  EXPECT_EQ(asked.count(2), 0u);  // never named to the hook: not prepared, never asked
  EXPECT_EQ(asked[0], 1);
  EXPECT_EQ(asked[1], 2);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_DOUBLE_EQ(seen[0].prepare_s, 0.5);
  EXPECT_DOUBLE_EQ(seen[1].prepare_s, 0.5);
  EXPECT_FALSE(seen[2].prepared);
}

/// Runs take no time (each timed phase one batch of 1 ms runs). Candidate c's compile ends at
/// ends_s[c] on a clock that moves only when the driver waits: wait_prepared() to the first
/// end among those it waits for, prepare() to the candidate's own end. No wall clock.
class CompileClockSite final : public detail::RunSite, public detail::RoundObserver {
 public:
  explicit CompileClockSite(std::vector<double> ends_s) : ends_s_(std::move(ends_s)) {}

  std::optional<std::vector<double>> time_batch(std::size_t, int runs) override {
    return std::vector<double>(static_cast<std::size_t>(runs), 1.0);
  }
  std::map<std::size_t, detail::CollectedRuns> collect() override { return {}; }
  std::string prepare(const Tuning&, std::size_t candidate) override {
    clock_s = std::max(clock_s, ends_s_.at(candidate));
    return {};
  }
  std::optional<double> prepared(std::size_t candidate) override {
    if (ends_s_.at(candidate) > clock_s) return std::nullopt;
    return ends_s_[candidate];
  }
  bool tells_prepared() const override { return true; }
  void prepare_round(const Tuning&) override { ++rounds_prepared; }
  double now_s() override { return clock_s; }
  void wait_prepared(const Tuning&, const std::vector<std::size_t>& candidates, double until_s) override {
    double first = ends_s_.at(candidates.front());
    for (std::size_t c : candidates) first = std::min(first, ends_s_.at(c));
    clock_s = std::max(clock_s, std::min(first, until_s));
  }
  void step(const Step& step) override { trace += simulation::render(step) + " "; }

  double clock_s = 0.0;
  int rounds_prepared = 0;
  std::string trace;

 private:
  std::vector<double> ends_s_;
};

/// One round over candidates 0-3 that may leave out those unprepared (`leave`), then the
/// end, keeping the standings.
class LeavesUnpreparedOut final : public Strategy {
 public:
  LeavesUnpreparedOut(std::vector<CandidateStanding>& seen, LeaveUnprepared leave) : seen_(seen), leave_(leave) {}
  Round first_round(std::size_t) override {
    Round round{{0, 1, 2, 3}, 0, 1};
    round.leave_unprepared = leave_;
    return round;
  }
  Round next_round(const std::vector<CandidateStanding>& standings) override {
    seen_ = standings;
    std::vector<std::size_t> ran;
    for (std::size_t c = 0; c < standings.size(); ++c) {
      if (!standings[c].left_out) ran.push_back(c);
    }
    return Round{ran, 0, 0};
  }

 private:
  std::vector<CandidateStanding>& seen_;
  LeaveUnprepared leave_;
};

// A round does not wait on one slow compile while others are ready: of 0-3, whose compiles end
// at 1.0, 30 (deliberately slow), 1.2 and 0.5 s, it runs 0 once compiled; when three are
// compiled (at 1.2 s) it leaves candidate 1 out instead of waiting 30 s for it, and runs 2
// and 3, in the round's order; the strategy's standings say so. No wall clock.
TEST(RoundDriver, ARoundRunsWhatIsCompiledAndLeavesOutASlowCompile) {
  static std::vector<CandidateStanding> seen;
  register_strategy("test_leaves_slow_out",
                    [](const Measurement&) { return std::make_unique<LeavesUnpreparedOut>(seen, LeaveUnprepared{3, 0.0, 0.0}); });
  Measurement m;
  m.strategy = "test_leaves_slow_out";
  Tuning tuning(simulation::names(4), m, {});
  SingleProcessCommunicator alone;
  CompileClockSite site({1.0, 30.0, 1.2, 0.5});
  detail::RoundDriver driver(tuning, alone, detail::ContextMaker{"slow", "[]", std::chrono::minutes(1)}, site, site);
  driver.drive([](const Step&) {});
  EXPECT_EQ(site.trace, "B0 t0 B2 t2 B3 t3 c0 c2 c3 end ");
  EXPECT_DOUBLE_EQ(site.clock_s, 1.2);
  EXPECT_EQ(site.rounds_prepared, 1);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_TRUE(seen[1].left_out);
  EXPECT_FALSE(seen[1].prepared);
  EXPECT_FALSE(tuning.results()[1].measured);
  for (std::size_t c : {0u, 2u, 3u}) EXPECT_FALSE(seen[c].left_out) << c;
  EXPECT_EQ(tuning.best(), 0u);
}

// A wait every compile of the round shares (a compiler's one-time set-up in a fresh process:
// the compiles of 0-3 end at 2.0, 2.2, 2.4 and 10 s) lengthens a patience timed from the
// round's start (1x the 2.4 s waited when three are compiled: candidate 3 is left out at
// 4.8 s) but not one timed from the first compile's end (1x the 0.4 s since 2.0 s: at 2.8 s).
TEST(RoundDriver, APatienceFromTheFirstPreparedDoesNotCountASharedWait) {
  static std::vector<CandidateStanding> seen;
  for (const bool from_first : {false, true}) {
    const std::string name = from_first ? "test_patient_from_first" : "test_patient_from_start";
    register_strategy(name, [from_first](const Measurement&) {
      return std::make_unique<LeavesUnpreparedOut>(seen, LeaveUnprepared{3, 1.0, 0.0, from_first});
    });
    Measurement m;
    m.strategy = name;
    Tuning tuning(simulation::names(4), m, {});
    SingleProcessCommunicator alone;
    CompileClockSite site({2.0, 2.2, 2.4, 10.0});
    detail::RoundDriver driver(tuning, alone, detail::ContextMaker{"set-up", "[]", std::chrono::minutes(1)}, site, site);
    driver.drive([](const Step&) {});
    EXPECT_EQ(site.trace, "B0 t0 B1 t1 B2 t2 c0 c1 c2 end ") << name;
    EXPECT_DOUBLE_EQ(site.clock_s, from_first ? 2.8 : 4.8) << name;
    ASSERT_EQ(seen.size(), 4u);
    EXPECT_TRUE(seen[3].left_out) << name;
  }
}

// With several ranks the candidates run are those compiled on every rank, agreed in one MAX
// all-reduce each time (rank 0's slow compile is candidate 1, rank 1's candidate 2): both
// ranks run 0 and 3 and leave out 1 and 2, making the same collectives (the lockstep ranks
// throw if they differ), though each rank alone would have run a different pair.
TEST(RoundDriver, RanksLeaveOutTheSameCandidatesWhateverCompiledWhere) {
  static std::vector<CandidateStanding> seen;
  register_strategy("test_leaves_out_on_ranks",
                    [](const Measurement&) { return std::make_unique<LeavesUnpreparedOut>(seen, LeaveUnprepared{2, 0.0, 0.0}); });
  Measurement m;
  m.strategy = "test_leaves_out_on_ranks";
  std::vector<std::unique_ptr<Tuning>> tunings;
  std::vector<std::unique_ptr<CompileClockSite>> sites;
  sites.push_back(std::make_unique<CompileClockSite>(std::vector<double>{1.0, 30.0, 1.2, 0.5}));
  sites.push_back(std::make_unique<CompileClockSite>(std::vector<double>{0.4, 0.6, 30.0, 0.5}));
  for (int r = 0; r < 2; ++r) tunings.push_back(std::make_unique<Tuning>(simulation::names(4), m));
  simulation::on_lockstep_ranks(2, [&](std::size_t rank, Communicator& comm) {
    detail::RoundDriver driver(*tunings[rank], comm, detail::ContextMaker{"ranks", "[]", std::chrono::minutes(1)},
                               *sites[rank], *sites[rank]);
    driver.drive([](const Step&) {});
  });
  EXPECT_EQ(sites[0]->trace, "B0 t0 B3 t3 c0 c3 end ");
  EXPECT_EQ(sites[1]->trace, sites[0]->trace);
  for (const auto& tuning : tunings) {
    EXPECT_FALSE(tuning->results()[1].measured);
    EXPECT_FALSE(tuning->results()[2].measured);
  }
  EXPECT_TRUE(seen[1].left_out);
  EXPECT_TRUE(seen[2].left_out);
}

}  // namespace
}  // namespace disttune
