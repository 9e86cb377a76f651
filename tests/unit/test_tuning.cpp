// Tests of the Tuning state machine (src/engine/tuning.cpp), by replaying given timings.
#include <limits>
#include <stdexcept>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/tuning.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

Measurement small(int warmup, int timed, Statistic statistic = Statistic::median) {
  Measurement m;
  m.warmup_runs = warmup;
  m.timed_runs = timed;
  m.statistic = statistic;
  m.strategy = "exhaustive";  // these tests follow the spec's schedule step by step
  return m;
}

using simulation::replay;

TEST(Tuning, ExhaustiveStepSequence) {
  Tuning tuning({"{\"a\":1}", "{\"a\":2}"}, small(1, 2));
  EXPECT_EQ(replay(tuning, {{3.0}, {2.0}}), "w0 B0 t0 t0 w1 B1 t1 t1 c0 c1 end");
  ASSERT_TRUE(tuning.finished());
  EXPECT_EQ(tuning.best(), 1u);
  EXPECT_EQ(tuning.results()[0].samples.size(), 2u);
  EXPECT_DOUBLE_EQ(tuning.results()[1].agreed_ms, 2.0);
}

TEST(Tuning, DefaultsAreTheSpecsFiveAndTen) {
  Measurement spec;  // the C++ default strategy is "converge"; the spec's method by name
  spec.strategy = "exhaustive";
  Tuning tuning({"{}"}, spec);
  int warmups = 0, timed = 0;
  while (auto step = tuning.next()) {
    if (step->kind == StepKind::warmup) ++warmups;
    if (step->kind == StepKind::timed) { ++timed; }
    if (step->kind == StepKind::collect) {
      for (int i = 0; i < step->count; ++i) tuning.record_sample(0, 1.0);
    }
    if (step->kind == StepKind::round_end) tuning.end_round(tuning.local_round_values());
  }
  EXPECT_EQ(warmups, 5);
  EXPECT_EQ(timed, 10);
}

TEST(Tuning, StatisticIsConfigurable) {
  const std::vector<std::vector<double>> times = {{1.0, 1.0, 10.0}, {2.0, 2.0, 2.0}};
  auto timed_list = [](const std::vector<double>& list) { return list; };
  for (auto [statistic, expected_best] : {std::pair{Statistic::median, 0u}, {Statistic::mean, 1u},
                                          {Statistic::min, 0u}}) {
    Tuning tuning({"0", "1"}, small(0, 3, statistic));
    std::vector<std::size_t> used(2, 0);
    while (auto step = tuning.next()) {
      if (step->kind == StepKind::collect) {
        for (double ms : timed_list(times[step->candidate])) tuning.record_sample(step->candidate, ms);
      }
      if (step->kind == StepKind::round_end) tuning.end_round(tuning.local_round_values());
    }
    EXPECT_EQ(tuning.best(), expected_best) << to_string(statistic);
  }
}

TEST(Tuning, TiesGoToTheLowestIndex) {
  Tuning tuning({"0", "1", "2"}, small(0, 1));
  replay(tuning, {{2.0}, {1.0}, {1.0}});
  EXPECT_EQ(tuning.best(), 1u);
}

TEST(Tuning, FailedCandidateKeepsBarriersButSkipsRuns) {
  Tuning tuning({"0", "1"}, small(2, 2));
  EXPECT_EQ(replay(tuning, {{1.0}, {5.0}}, {0}), "w0 B0 w1 w1 B1 t1 t1 c1 end");
  EXPECT_TRUE(tuning.results()[0].failed);
  EXPECT_EQ(tuning.results()[0].error, "boom");
  EXPECT_EQ(tuning.best(), 1u);
}

TEST(Tuning, EveryCandidateFailedMeansNoBest) {
  Tuning tuning({"0", "1"}, small(1, 1));
  replay(tuning, {{1.0}, {1.0}}, {0, 1});
  EXPECT_FALSE(tuning.best().has_value());
}

TEST(Tuning, InfiniteAgreedTimeMeansFailedOnAnotherRank) {
  Tuning tuning({"0", "1"}, small(0, 1));
  while (auto step = tuning.next()) {
    if (step->kind == StepKind::collect) tuning.record_sample(step->candidate, 1.0 + double(step->candidate));
    if (step->kind == StepKind::round_end) {
      std::vector<double> agreed = tuning.local_round_values();
      agreed[0] = std::numeric_limits<double>::infinity();  // as if MAX-reduced with a failure
      tuning.end_round(agreed);
    }
  }
  EXPECT_TRUE(tuning.results()[0].failed);
  EXPECT_EQ(tuning.results()[0].error, "failed on another rank");
  EXPECT_EQ(tuning.best(), 1u);
}

TEST(Tuning, InvalidSampleIsRetakenInAnAgreedRound) {
  Tuning tuning({"0"}, small(0, 2));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(replay(tuning, {{1.0, nan, 3.0}}), "B0 t0 t0 c0 end B0 t0 c0 end");
  EXPECT_EQ(tuning.results()[0].samples, (std::vector<double>{1.0, 3.0}));
  EXPECT_FALSE(tuning.results()[0].failed);
}

TEST(Tuning, EveryRankMakesTheReTakesOfOneRank) {
  // Rank 1 times NaN once for candidate 0: both ranks make the re-take round (replay_ranks
  // throws if their collectives differ); rank 0 drops its extra sample, so both keep 2.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tuning rank0({"0", "1"}, small(1, 2));
  Tuning rank1({"0", "1"}, small(1, 2));
  const simulation::Sampler steady = [](std::size_t c, int) { return 1.0 + double(c); };
  const simulation::Sampler flaky = [&](std::size_t c, int run) { return c == 0 && run == 0 ? nan : 1.0 + double(c); };
  const std::string trace = simulation::replay_ranks({&rank0, &rank1}, {steady, flaky});
  EXPECT_EQ(trace, "w0 B0 t0 t0 w1 B1 t1 t1 c0 c1 end B0 t0 c0 end");
  for (const Tuning* tuning : {&rank0, &rank1}) {
    EXPECT_EQ(tuning->results()[0].samples, (std::vector<double>{1.0, 1.0}));
    EXPECT_FALSE(tuning->results()[0].failed);
    EXPECT_EQ(tuning->best(), 0u);
  }
}

TEST(Tuning, ABatchStandsForItsTimedPhase) {
  Tuning tuning({"0"}, small(0, 3));
  std::string trace;
  while (auto step = tuning.next()) {
    trace += simulation::render(*step) + " ";
    if (step->kind == StepKind::timed) tuning.batch_timed_phase();
    if (step->kind == StepKind::collect) {
      EXPECT_EQ(step->count, 3);
      for (int i = 0; i < step->count; ++i) tuning.record_sample(0, 1.0);
    }
    if (step->kind == StepKind::round_end) tuning.end_round(tuning.local_round_values());
  }
  EXPECT_EQ(trace, "B0 t0 c0 end ");
  EXPECT_EQ(tuning.results()[0].samples.size(), 3u);
  Tuning early({"0"}, small(0, 3));
  EXPECT_THROW(early.batch_timed_phase(), std::logic_error);
}

TEST(Tuning, TooManyInvalidSamplesFailTheCandidate) {
  Tuning tuning({"0", "1"}, small(0, 1));
  replay(tuning, {{-1.0}, {2.0}});
  EXPECT_TRUE(tuning.results()[0].failed);
  EXPECT_NE(tuning.results()[0].error.find("invalid"), std::string::npos);
  EXPECT_EQ(tuning.best(), 1u);
}

TEST(Tuning, BadInputIsRejected) {
  EXPECT_THROW(Tuning({}, Measurement{}), std::invalid_argument);
  EXPECT_THROW(Tuning({"0"}, small(-1, 1)), std::invalid_argument);
  EXPECT_THROW(Tuning({"0"}, small(1, 0)), std::invalid_argument);
  Measurement unknown;
  unknown.strategy = "psychic";
  EXPECT_THROW(Tuning({"0"}, unknown), std::invalid_argument);
  Tuning tuning({"0"}, small(0, 1));
  EXPECT_THROW(tuning.best(), std::logic_error);
}

/// Keeps what begin() was given; measures candidate 0 once.
class SpaceWitness final : public Strategy {
 public:
  static inline SpaceInfo seen;
  static inline int begun = 0;
  void begin(const SpaceInfo& space) override {
    seen = space;
    ++begun;
  }
  Round first_round(std::size_t) override { return {{0}, 0, 1}; }
  Round next_round(const std::vector<CandidateStanding>&) override { return {{0}, 0, 0}; }
};

TEST(Tuning, TheStrategyBeginsWithTheSpaceThePriorAndTheSeed) {
  register_strategy("space-witness", [](const Measurement&) { return std::make_unique<SpaceWitness>(); });
  Measurement m;
  m.strategy = "space-witness";
  m.strategy_options = {{"seed", "9"}};
  Tuning tuning({"\"a\"", "\"b\"", "\"c\""}, m, {2, 0});
  EXPECT_EQ(SpaceWitness::begun, 1);
  EXPECT_EQ(SpaceWitness::seen.candidates, (std::vector<std::string>{"\"a\"", "\"b\"", "\"c\""}));
  EXPECT_EQ(SpaceWitness::seen.prior, (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(SpaceWitness::seen.seed, 9u);
  replay(tuning, {{1.0}, {1.0}, {1.0}});
  EXPECT_TRUE(tuning.results()[0].measured);
  EXPECT_FALSE(tuning.results()[1].measured);  // never named: never run
  EXPECT_THROW(Tuning({"\"a\""}, m, {1}), std::invalid_argument);  // prior out of range
}

/// One round over 0, 1, 2 that may leave candidates out once one ran; keeps the standings.
class LeavesOut final : public Strategy {
 public:
  static inline std::vector<CandidateStanding> seen;
  Round first_round(std::size_t) override {
    Round round{{0, 1, 2}, 0, 1};
    round.leave_unprepared = LeaveUnprepared{1, 0.0, 0.0};
    return round;
  }
  Round next_round(const std::vector<CandidateStanding>& standings) override {
    seen = standings;
    return {{1}, 0, 0};
  }
};

// The driver's side of a round that may leave candidates out: between turns it may leave
// out unstarted candidates; they make no runs, owe no samples (no re-take round) and their
// standings say so; the others keep their order.
TEST(Tuning, CandidatesLeftOutMakeNoRunsAndTheStandingsSaySo) {
  register_strategy("leaves-out", [](const Measurement&) { return std::make_unique<LeavesOut>(); });
  Measurement m;
  m.strategy = "leaves-out";
  Tuning tuning({"0", "1", "2"}, m);
  EXPECT_EQ(tuning.unstarted(), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(tuning.started(), 0u);
  tuning.leave_out(0);
  EXPECT_THROW(tuning.leave_out(7), std::logic_error);
  EXPECT_EQ(simulation::render(*tuning.next()), "B1");
  EXPECT_TRUE(tuning.unstarted().empty());  // mid-turn: nothing to choose
  EXPECT_THROW(tuning.leave_out(2), std::logic_error);
  EXPECT_EQ(simulation::render(*tuning.next()), "t1");
  EXPECT_EQ(tuning.started(), 1u);
  EXPECT_EQ(tuning.unstarted(), (std::vector<std::size_t>{2}));  // its runs are all issued
  tuning.leave_out(2);
  EXPECT_TRUE(tuning.unstarted().empty());
  EXPECT_EQ(simulation::render(*tuning.next()), "c1");
  tuning.record_sample(1, 1.0);
  EXPECT_EQ(tuning.next()->kind, StepKind::round_end);
  tuning.end_round(tuning.local_round_values());
  ASSERT_TRUE(tuning.finished());  // no re-take round for what the left out "owe"
  EXPECT_EQ(tuning.best(), 1u);
  ASSERT_EQ(LeavesOut::seen.size(), 3u);
  EXPECT_TRUE(LeavesOut::seen[0].left_out);
  EXPECT_FALSE(LeavesOut::seen[1].left_out);
  EXPECT_TRUE(LeavesOut::seen[2].left_out);
  EXPECT_FALSE(tuning.results()[0].measured);
  EXPECT_FALSE(tuning.results()[2].measured);
}

// A round that does not allow it (every built-in strategy but the search's exploring rounds)
// runs in list order: nothing is unstarted for a driver to choose.
TEST(Tuning, ARoundWithoutLeaveUnpreparedAfterRunsInListOrder) {
  Tuning tuning({"0", "1"}, small(0, 1));
  EXPECT_TRUE(tuning.unstarted().empty());
  EXPECT_THROW(tuning.leave_out(1), std::logic_error);
  EXPECT_EQ(replay(tuning, {{2.0}, {1.0}}), "B0 t0 B1 t1 c0 c1 end");
}

}  // namespace
}  // namespace disttune
