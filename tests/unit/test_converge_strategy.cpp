// Tests of the converge strategy (src/engine/converge_strategy.cpp) by replaying timings.
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/strategy.hpp"
#include "disttune/tuning.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

using simulation::replay_ranks;
using simulation::Sampler;

Measurement converge() {
  Measurement m;
  m.strategy = "converge";
  return m;
}

std::vector<std::string> names(std::size_t count) {
  std::vector<std::string> list;
  for (std::size_t i = 0; i < count; ++i) list.push_back(std::to_string(i));
  return list;
}

/// Deterministic noisy timings: base[c] * (1 + noise * u), u uniform in [-1, 1], seeded.
Sampler noisy(std::vector<double> base, double noise, unsigned seed) {
  auto engine = std::make_shared<std::mt19937>(seed);
  return [=](std::size_t c, int) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    return base[c] * (1.0 + noise * u(*engine));
  };
}

double device_ms(const Tuning& tuning) {
  double total = 0.0;
  for (const CandidateResult& result : tuning.results()) {
    for (double sample : result.samples) total += sample;
  }
  return total;
}

TEST(ConvergeStrategy, ClearlySlowerCandidatesStopAfterTheFirstRound) {
  Tuning tuning(names(6), converge());
  replay_ranks({&tuning}, {noisy({3.0, 1.0, 2.0, 4.0, 1.5, 6.0}, 0.002, 1)});
  EXPECT_EQ(tuning.best(), 1u);
  for (std::size_t c : {0u, 2u, 3u, 4u, 5u}) {
    EXPECT_EQ(tuning.results()[c].samples.size(), 2u) << c;
    EXPECT_TRUE(tuning.results()[c].dropped) << c;
  }
  EXPECT_FALSE(tuning.results()[1].within_noise);
}

TEST(ConvergeStrategy, AQuietCandidateStopsOnceItsStatisticIsUnderTheNoiseThreshold) {
  Tuning tuning(names(1), converge());
  replay_ranks({&tuning}, {noisy({1.0}, 0.002, 2)});
  const std::size_t samples = tuning.results()[0].samples.size();
  EXPECT_GE(samples, 5u);  // never on fewer samples than its spread can be trusted with
  EXPECT_LE(samples, 16u);
}

TEST(ConvergeStrategy, ANoisyCandidateGetsMoreSamplesThanAQuietOne) {
  Tuning quiet(names(1), converge());
  Tuning loud(names(1), converge());
  replay_ranks({&quiet}, {noisy({1.0}, 0.002, 3)});
  replay_ranks({&loud}, {noisy({1.0}, 0.05, 3)});
  EXPECT_GT(loud.results()[0].samples.size(), 4 * quiet.results()[0].samples.size());
}

TEST(ConvergeStrategy, MinimumDeviceTimeKeepsShortKernelsSampling) {
  Measurement m = converge();
  m.min_time_ms = 0.5;
  Tuning tuning(names(1), m);
  replay_ranks({&tuning}, {noisy({0.01}, 0.001, 4)});  // 10 us: 50 runs make 0.5 ms
  EXPECT_GE(tuning.results()[0].samples.size(), 50u);
}

TEST(ConvergeStrategy, TheBudgetBoundsTheDeviceTimeOfABigSpace) {
  std::vector<double> base;
  for (int i = 0; i < 40; ++i) base.push_back(1.0 + 0.001 * i);  // all close: no early drops
  Measurement unlimited = converge();
  Measurement limited = converge();
  limited.budget_ms = 150.0;
  Tuning free_tuning(names(base.size()), unlimited);
  Tuning bounded(names(base.size()), limited);
  replay_ranks({&free_tuning}, {noisy(base, 0.03, 5)});
  replay_ranks({&bounded}, {noisy(base, 0.03, 5)});
  EXPECT_GT(device_ms(free_tuning), 300.0);
  // The first round (2 runs each, 80 ms) always runs; later rounds stay within the budget.
  EXPECT_LE(device_ms(bounded), 150.0 * 1.05);
  EXPECT_TRUE(bounded.best().has_value());
}

TEST(ConvergeStrategy, NearTiesRunInterleavedAndAreMarkedWithinNoise) {
  Tuning tuning(names(3), converge());
  const std::string trace = replay_ranks({&tuning}, {noisy({1.0, 1.0005, 2.0}, 0.01, 6)});
  // The last round alternates the two contenders, one timed run each.
  const std::string interleaved = "B0 t0 c0 B1 t1 c1 B0 t0 c0";
  EXPECT_NE(trace.find(interleaved), std::string::npos) << trace;
  EXPECT_TRUE(tuning.results()[0].within_noise);
  EXPECT_TRUE(tuning.results()[1].within_noise);
  EXPECT_FALSE(tuning.results()[2].within_noise);
}

TEST(ConvergeStrategy, AnUnresolvedNearTieKeepsTheSameChoiceFromOneTuningToTheNext) {
  // 0.05% apart under 0.3% noise: which one measures faster changes with the seed, the
  // choice does not (the lowest index among those within max_noise of the fastest).
  for (unsigned seed = 10; seed < 20; ++seed) {
    Tuning tuning(names(3), converge());
    replay_ranks({&tuning}, {noisy({2.0, 1.0005, 1.0}, 0.003, seed)});
    EXPECT_EQ(tuning.best(), 1u) << "seed " << seed;
  }
}

TEST(ConvergeStrategy, ANearTieApartByMoreThanMaxNoiseGoesToTheFaster) {
  // 1% apart under 2% noise: within noise after the interleaved runs, but more than
  // max_noise (0.5%) apart as measured: the faster one, not the lowest index.
  int faster = 0;
  for (unsigned seed = 30; seed < 40; ++seed) {
    Tuning tuning(names(2), converge());
    replay_ranks({&tuning}, {noisy({1.01, 1.0}, 0.02, seed)});
    faster += tuning.best() == 1u;
  }
  EXPECT_GE(faster, 8);
}

TEST(ConvergeStrategy, InterleavedRunsSeeThroughADrift) {
  // The device slows down by 0.1% per run (warming up): measured one after the other, the
  // later candidate looks slower; interleaved, the 1%-faster candidate 1 wins.
  auto runs = std::make_shared<int>(0);
  const Sampler drifting = [runs](std::size_t c, int) {
    const double base = c == 0 ? 1.0 : 0.99;
    return base * (1.0 + 0.001 * (*runs)++);
  };
  Tuning tuning(names(2), converge());
  replay_ranks({&tuning}, {drifting});
  EXPECT_EQ(tuning.best(), 1u);
}

TEST(ConvergeStrategy, RanksTakeTheSameDecisionsOnMaxReducedNumbers) {
  Tuning rank0(names(4), converge());
  Tuning rank1(names(4), converge());
  replay_ranks({&rank0, &rank1}, {noisy({1.0, 1.5, 3.0, 1.01}, 0.01, 7),
                                  noisy({2.0, 1.5, 3.0, 1.01}, 0.03, 8)});
  EXPECT_EQ(rank0.best(), rank1.best());
  EXPECT_EQ(rank0.best(), 3u);  // rank 1 is slow on candidate 0: MAX makes it 2.0
}

TEST(ConvergeStrategy, FailureOnOneRankExcludesTheCandidateEverywhere) {
  Tuning rank0(names(3), converge());
  Tuning rank1(names(3), converge());
  replay_ranks({&rank0, &rank1}, {noisy({1.0, 1.5, 3.0}, 0.01, 9), noisy({1.0, 1.5, 3.0}, 0.01, 10)},
               {0}, 1);
  EXPECT_EQ(rank0.best(), 1u);
  EXPECT_EQ(rank1.best(), 1u);
  EXPECT_EQ(rank0.results()[0].error, "failed on another rank");
}

TEST(ConvergeStrategy, ADroppedCandidateComesBackWhenEveryOtherFails) {
  // Candidate 1 is dropped after round 1 (clearly slower); candidate 0 then fails at its
  // re-warm-up: measurement goes on with candidate 1 instead of ending without a choice.
  Tuning tuning(names(2), converge());
  replay_ranks({&tuning}, {noisy({1.0, 1.5}, 0.01, 11)}, {0});
  EXPECT_EQ(tuning.best(), 1u);
  EXPECT_FALSE(tuning.results()[1].dropped);
}

TEST(ConvergeStrategy, EveryCandidateFailingLeavesNoChoice) {
  Tuning tuning(names(2), converge());
  simulation::replay(tuning, {{1.0}, {1.0}}, {0, 1});
  EXPECT_FALSE(tuning.best().has_value());
}

TEST(ConvergeStrategy, IsTheDefaultWhenNoStrategyIsAsked) {
  ::unsetenv("TRITON_DIST_AUTOTUNE_STRATEGY");
  EXPECT_EQ(strategy_name(Measurement{}), "converge");
  Measurement spec;
  spec.strategy = "exhaustive";
  EXPECT_EQ(strategy_name(spec), "exhaustive");
}

TEST(ConvergeStrategy, SettingsOutOfRangeAreClearErrors) {
  Measurement m = converge();
  m.max_noise = 0.0;
  EXPECT_THROW(validate(m), std::invalid_argument);
  m = converge();
  m.budget_ms = -1.0;
  EXPECT_THROW(validate(m), std::invalid_argument);
  m = converge();
  m.min_time_ms = std::numeric_limits<double>::infinity();
  EXPECT_THROW(validate(m), std::invalid_argument);
}

}  // namespace
}  // namespace disttune
