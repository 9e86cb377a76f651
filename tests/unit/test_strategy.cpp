// Tests of the strategies (src/strategies/exhaustive_strategy.cpp, src/strategies/adaptive_strategy.cpp) by replaying timings.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/strategy.hpp"
#include "disttune/tuning.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

using simulation::replay_ranks;
using simulation::names;
using simulation::noisy;

Measurement adaptive(int warmup = 5, int timed = 10) {
  Measurement m;
  m.warmup_runs = warmup;
  m.timed_runs = timed;
  m.strategy = "adaptive";
  return m;
}

int timed_runs(const std::string& trace) {
  int count = 0;
  for (std::size_t at = trace.find('t'); at != std::string::npos; at = trace.find('t', at + 1)) ++count;
  return count;
}

TEST(AdaptiveStrategy, ClearlySlowerCandidatesAreDroppedAfterTheFirstRound) {
  Tuning tuning(names(8), adaptive());
  const std::string trace = replay_ranks({&tuning}, {noisy({5, 1, 2, 3, 4, 6, 7, 8}, 0.0, 1)});
  EXPECT_EQ(tuning.best(), 1u);
  EXPECT_EQ(timed_runs(trace), 8 * 2);  // one round of 2 samples each, then one survivor
  EXPECT_TRUE(tuning.results()[0].dropped);
  EXPECT_FALSE(tuning.results()[1].dropped);
}

TEST(AdaptiveStrategy, CloseContendersGetSamplesUpToTheCap) {
  Tuning tuning(names(3), adaptive(5, 10));
  replay_ranks({&tuning}, {noisy({1.00, 1.01, 2.0}, 0.001, 2)});
  EXPECT_EQ(tuning.best(), 0u);
  EXPECT_EQ(tuning.results()[0].samples.size(), 20u);  // cap: twice the timed runs
  EXPECT_EQ(tuning.results()[1].samples.size(), 20u);
  EXPECT_EQ(tuning.results()[2].samples.size(), 2u);
  EXPECT_TRUE(tuning.results()[2].dropped);
}

TEST(AdaptiveStrategy, NoiseKeepsCandidatesThatAreNotClearlySlower) {
  // 5% apart but 4% noise: not clearly slower after two samples, so both stay a while.
  Tuning tuning(names(2), adaptive());
  replay_ranks({&tuning}, {noisy({1.00, 1.05}, 0.04, 3)});
  EXPECT_GT(tuning.results()[1].samples.size(), 2u);
  EXPECT_GT(tuning.results()[0].noise, 0.0);
}

TEST(AdaptiveStrategy, FewerRunsThanExhaustiveWithTheSameChoice) {
  const std::vector<double> base = {3.0, 1.2, 1.0, 2.5, 1.9, 4.0, 1.04, 5.0, 2.2, 1.5,
                                    3.3, 1.1, 2.8, 6.0, 1.7, 2.0};
  Measurement exhaustive_m = adaptive();
  exhaustive_m.strategy = "exhaustive";
  Tuning exhaustive(names(base.size()), exhaustive_m);
  Tuning adaptive_tuning(names(base.size()), adaptive());
  const int full = timed_runs(replay_ranks({&exhaustive}, {noisy(base, 0.01, 4)}));
  const int fewer = timed_runs(replay_ranks({&adaptive_tuning}, {noisy(base, 0.01, 4)}));
  EXPECT_EQ(exhaustive.best(), 2u);
  EXPECT_EQ(adaptive_tuning.best(), 2u);
  EXPECT_LT(fewer, full / 2);
}

TEST(AdaptiveStrategy, RanksTakeTheSameDecisionsOnMaxReducedNumbers) {
  // Rank 1 is slow on candidate 0: by the MAX rule candidate 1 wins, on both ranks, and
  // both ranks run the same steps (replay_ranks throws if they ever differ).
  Tuning rank0(names(3), adaptive());
  Tuning rank1(names(3), adaptive());
  replay_ranks({&rank0, &rank1}, {noisy({1.0, 1.5, 3.0}, 0.01, 5), noisy({2.0, 1.5, 3.0}, 0.01, 6)});
  EXPECT_EQ(rank0.best(), 1u);
  EXPECT_EQ(rank1.best(), 1u);
}

TEST(AdaptiveStrategy, FailureOnOneRankExcludesTheCandidateEverywhere) {
  Tuning rank0(names(3), adaptive());
  Tuning rank1(names(3), adaptive());
  replay_ranks({&rank0, &rank1}, {noisy({1.0, 1.5, 3.0}, 0.0, 7), noisy({1.0, 1.5, 3.0}, 0.0, 8)},
               {0}, 1);
  EXPECT_EQ(rank0.best(), 1u);
  EXPECT_EQ(rank1.best(), 1u);
  EXPECT_EQ(rank0.results()[0].error, "failed on another rank");
}

/// Measures candidate 0 only, then stops: a strategy a caller adds by name.
class FirstOnly final : public Strategy {
 public:
  explicit FirstOnly(const Measurement& m) : timed_(m.timed_runs) {}
  Round first_round(std::size_t) override { return Round{{0}, 0, timed_}; }
  Round next_round(const std::vector<CandidateStanding>&) override { return Round{{0}, 0, 0}; }

 private:
  int timed_;
};

/// Returns whatever round it was given: for checking that bad rounds are refused.
class Fixed final : public Strategy {
 public:
  explicit Fixed(Round round) : round_(std::move(round)) {}
  Round first_round(std::size_t) override { return round_; }
  Round next_round(const std::vector<CandidateStanding>&) override { return Round{}; }

 private:
  Round round_;
};

TEST(StrategyRegistry, ARegisteredStrategyIsSelectableByName) {
  register_strategy("first-only", [](const Measurement& m) { return std::make_unique<FirstOnly>(m); });
  const std::vector<std::string> registered = registered_strategies();
  ASSERT_GE(registered.size(), 3u);
  EXPECT_EQ(registered[0], "exhaustive");
  EXPECT_EQ(registered[1], "adaptive");
  EXPECT_NE(std::find(registered.begin(), registered.end(), "first-only"), registered.end());
  Measurement m = adaptive(0, 3);
  m.strategy = "first-only";
  Tuning tuning(names(3), m);
  EXPECT_EQ(replay_ranks({&tuning}, {noisy({5.0, 1.0, 2.0}, 0.0, 9)}), "B0 t0 t0 t0 c0 end");
  EXPECT_EQ(tuning.best(), 0u);
  EXPECT_FALSE(tuning.results()[1].measured);
}

TEST(StrategyRegistry, RefusesATakenOrEmptyNameAndAMissingFactory) {
  auto factory = [](const Measurement& m) { return make_exhaustive_strategy(m); };
  EXPECT_THROW(register_strategy("exhaustive", factory), std::invalid_argument);
  EXPECT_THROW(register_strategy("", factory), std::invalid_argument);
  EXPECT_THROW(register_strategy("nothing", nullptr), std::invalid_argument);
}

TEST(StrategyRegistry, ABadRoundNamesTheStrategy) {
  const std::vector<std::pair<std::string, Round>> bad = {
      {"out-of-range", Round{{0, 7}, 0, 1}}, {"descending", Round{{1, 0}, 0, 1}},
      {"negative", Round{{0}, -1, 1}}};
  for (const auto& [name, round] : bad) {
    register_strategy(name, [round = round](const Measurement&) { return std::make_unique<Fixed>(round); });
    Measurement m;
    m.strategy = name;
    try {
      Tuning tuning(names(2), m);
      ADD_FAILURE() << name << " was accepted";
    } catch (const std::logic_error& error) {
      EXPECT_NE(std::string(error.what()).find("strategy '" + name + "'"), std::string::npos) << error.what();
    }
  }
}

TEST(Strategy, UnknownNameIsAClearError) {
  Measurement m;
  m.strategy = "bayesian";
  try {
    make_strategy(m);
    FAIL();
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("exhaustive, adaptive"), std::string::npos);
  }
}

}  // namespace
}  // namespace disttune
