// Tests of the converge strategy (src/strategies/converge_strategy.cpp) by replaying timings.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/error.hpp"
#include "disttune/strategy.hpp"
#include "disttune/tuning.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

using simulation::replay_ranks;
using simulation::names;
using simulation::noisy;
using simulation::Sampler;

Measurement converge() {
  Measurement m;
  m.strategy = "converge";
  return m;
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
    EXPECT_EQ(tuning.results()[c].samples.size(), 1u) << c;  // one run, no warm-up
    EXPECT_TRUE(tuning.results()[c].dropped) << c;
  }
  EXPECT_FALSE(tuning.results()[1].within_noise);
}

TEST(ConvergeStrategy, OneSampleDropsOnlyBeyondTheScreenMargin) {
  // 10% slower on one sample: within the 15% screen, so it gets a second run (and is dropped
  // on two); 20% slower: dropped on one.
  Tuning tuning(names(3), converge());
  replay_ranks({&tuning}, {noisy({1.0, 1.1, 1.2}, 0.002, 12)});
  EXPECT_EQ(tuning.best(), 0u);
  EXPECT_EQ(tuning.results()[1].samples.size(), 2u);  // then clearly slower on two: dropped
  EXPECT_TRUE(tuning.results()[1].dropped);
  EXPECT_EQ(tuning.results()[2].samples.size(), 1u);
  EXPECT_TRUE(tuning.results()[2].dropped);
}

TEST(ConvergeStrategy, ALoneSurvivorStopsOnceEveryRivalIsDropped) {
  // Launch-bound times (1.5 us): min_time_ms alone would keep all of them sampling up to
  // 256 runs; the clearly slower are dropped on a few samples and the survivor then stops.
  const std::vector<double> base = {1.672e-3, 1.715e-3, 1.57e-3, 1.523e-3, 1.568e-3, 1.538e-3, 1.624e-3, 1.578e-3};
  Tuning tuning(names(base.size()), converge());
  replay_ranks({&tuning}, {noisy(base, 0.002, 3)});
  EXPECT_EQ(tuning.best(), 3u);
  std::size_t runs = 0;
  for (std::size_t c = 0; c < base.size(); ++c) {
    runs += tuning.results()[c].samples.size();
    EXPECT_EQ(tuning.results()[c].dropped, c != 3) << c;
  }
  EXPECT_LE(runs, 64u);
}

TEST(ConvergeStrategy, TheBaselineIsNeverDroppedOnOneSample) {
  Measurement m = converge();
  m.baseline = "1";
  Tuning tuning(names(2), m);
  replay_ranks({&tuning}, {noisy({1.0, 1.3}, 0.002, 13)});
  EXPECT_GE(tuning.results()[1].samples.size(), 2u);  // 30% slower, but it is the baseline
  EXPECT_EQ(tuning.best(), 0u);                       // and clearly slower after more samples
}

/// A 32-config matmul-like space (times 0.23-1.3 ms as on the H200, the two best 1% apart)
/// under 1% noise: losers cost one run each, so the timed runs add up to about twice one
/// run of every candidate, and the best is found every time.
TEST(ConvergeStrategy, ABigSpaceCostsAboutTwoRunsOfEachCandidate) {
  std::vector<double> base;
  for (int i = 0; i < 32; ++i) base.push_back(0.25 + 0.034 * ((i * 7) % 32));
  base[28] = 0.2273;
  base[26] = 0.2296;
  double one_pass = 0.0;
  for (double ms : base) one_pass += ms;
  int best = 0;
  for (unsigned seed = 40; seed < 50; ++seed) {
    Tuning tuning(names(base.size()), converge());
    replay_ranks({&tuning}, {noisy(base, 0.01, seed)});
    ASSERT_TRUE(tuning.best().has_value());
    EXPECT_TRUE(*tuning.best() == 28u || *tuning.best() == 26u) << "seed " << seed;
    best += *tuning.best() == 28u;
    EXPECT_LE(device_ms(tuning), 2.0 * one_pass) << "seed " << seed;
  }
  EXPECT_GE(best, 8);
}

/// Memory-bound near-twins (8 configs within 0.3%, 0.2% noise): measured precisely and all
/// within max_noise, they end on the same choice in every tuning, mostly without interleaved runs.
TEST(ConvergeStrategy, PreciseNearTwinsEndOnTheStableChoice) {
  const std::vector<double> base = {0.1203, 0.1201, 0.1200, 0.1202, 0.1204, 0.1203, 0.1205, 0.1201};
  int cheap = 0;
  for (unsigned seed = 50; seed < 60; ++seed) {
    Tuning tuning(names(base.size()), converge());
    replay_ranks({&tuning}, {noisy(base, 0.002, seed)});
    EXPECT_EQ(tuning.best(), 0u) << "seed " << seed;
    EXPECT_LE(device_ms(tuning), 160 * 0.1205) << "seed " << seed;
    cheap += device_ms(tuning) <= 70 * 0.1205;
  }
  EXPECT_GE(cheap, 7);  // 8 samples each, no interleaved round
}

/// Device time of the warm-up runs in a replay trace ("w<candidate>" steps).
double warmup_ms(const std::string& trace, const std::vector<double>& base) {
  double total = 0.0;
  std::istringstream steps(trace);
  for (std::string step; steps >> step;) {
    if (step.size() > 1 && step[0] == 'w') total += base[std::stoul(step.substr(1))];
  }
  return total;
}

/// The per-config times the H200 run of 2026-11-30 measured (bench/suite, disttune
/// exhaustive, ms), replayed under +-0.5% uniform noise, 10 seeds each: the device time the converge
/// schedule spends (timed runs and warm-ups; the host's gaps are not in it) and its choices.
TEST(ConvergeStrategy, TheSuiteCasesOfTheH200RunReplayWithinTheirTargets) {
  struct Case {
    const char* name;
    std::vector<double> ms;
    std::size_t best;       // the fastest as measured
    double most_device_ms;  // median bound on timed + warm-up device time
  };
  const std::vector<Case> cases = {
      {"matmul 4096^3",
       {0.454640, 0.460240, 0.441264, 0.426896, 0.375552, 0.412688, 0.381456, 0.410672, 0.308400, 0.310688, 0.328464,
        0.322896, 0.297824, 0.305152, 0.286896, 0.281392, 0.355792, 0.357872, 0.365744, 0.353040, 0.319952, 0.329808,
        0.319968, 0.338800, 0.254752, 0.270448, 0.235120, 0.243088, 0.231088, 0.235088, 0.250112, 0.245776},
       28, 33.0},  // ~10 ms of it the warm-up run of every candidate in round 1
      {"scale 2^26", {0.163168, 0.201824, 0.128080, 0.139696, 0.129680, 0.127808, 0.134912, 0.133120}, 5, 8.0},
      {"softmax 8192^2",
       {0.096512, 0.096864, 0.096064, 0.096016, 0.106896, 0.106768, 0.085472, 0.085296, 0.086272, 0.086240, 0.106960,
        0.107072, 0.105104, 0.105040, 0.096912, 0.096704, 0.098928, 0.099424, 0.172464, 0.172848, 0.140880, 0.141696,
        0.125696, 0.125680},
       7, 11.0},
  };
  for (const Case& c : cases) {
    std::vector<double> device;
    std::vector<int> chosen(c.ms.size(), 0);
    for (unsigned seed = 0; seed < 10; ++seed) {
      Tuning tuning(names(c.ms.size()), converge());
      const std::string trace = replay_ranks({&tuning}, {noisy(c.ms, 0.005, seed)});
      ASSERT_TRUE(tuning.best().has_value()) << c.name;
      ++chosen[*tuning.best()];
      device.push_back(device_ms(tuning) + warmup_ms(trace, c.ms));
      // Never more than 0.5% slower than the fastest (scale 2^26: 2 and 5 are 0.2% apart).
      EXPECT_LE(c.ms[*tuning.best()], c.ms[c.best] * 1.005) << c.name << " seed " << seed;
    }
    std::sort(device.begin(), device.end());
    const int most_chosen = *std::max_element(chosen.begin(), chosen.end());
    std::printf("%s: device ms median %.1f, max %.1f; the same choice in %d of 10\n", c.name,
                (device[4] + device[5]) / 2, device[9], most_chosen);
    EXPECT_LE((device[4] + device[5]) / 2, c.most_device_ms) << c.name;
    EXPECT_GE(most_chosen, 8) << c.name;
  }
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
  m.strategy_options["min_time_ms"] = "0.5";
  Tuning tuning(names(1), m);
  replay_ranks({&tuning}, {noisy({0.01}, 0.001, 4)});  // 10 us: 50 runs make 0.5 ms
  EXPECT_GE(tuning.results()[0].samples.size(), 50u);
}

TEST(ConvergeStrategy, TheBudgetBoundsTheDeviceTimeOfABigSpace) {
  std::vector<double> base;
  for (int i = 0; i < 40; ++i) base.push_back(1.0 + 0.001 * i);  // all close: no early drops
  Measurement unlimited = converge();
  Measurement limited = converge();
  limited.strategy_options["budget_ms"] = "150";
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
  // The last round alternates the two contenders, one timed run each (collected at its end).
  const std::string interleaved = "B0 t0 B1 t1 B0 t0";
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

/// The error of making converge with one option set to `text`, or "" if it is made.
std::string error_with(const std::string& name, const std::string& text) {
  Measurement m = converge();
  m.strategy_options[name] = text;
  try {
    (void)make_strategy(m);
  } catch (const InvalidSetting& error) {
    return error.what();
  }
  return "";
}

TEST(ConvergeStrategy, ParametersOutOfRangeAreClearErrorsNamingThem) {
  EXPECT_EQ(error_with("max_noise", "0"),
            "disttune: strategy 'converge' option max_noise must be a number in (0, 1), got '0'");
  EXPECT_NE(error_with("max_noise", "1").find("max_noise must be a number in (0, 1)"), std::string::npos);
  EXPECT_EQ(error_with("budget_ms", "-1"),
            "disttune: strategy 'converge' option budget_ms must be a finite number >= 0, got '-1'");
  EXPECT_NE(error_with("min_time_ms", "inf").find("min_time_ms must be a finite number >= 0"), std::string::npos);
  EXPECT_NE(error_with("min_time_ms", "0.5ms").find("min_time_ms"), std::string::npos);
  EXPECT_NE(error_with("effort", "quick").find("strategy 'converge' has no option 'effort' (its options: seed, "
                                               "max_noise, min_time_ms, budget_ms)"),
            std::string::npos);
  EXPECT_EQ(error_with("max_noise", "0.01"), "");
  EXPECT_EQ(error_with("budget_ms", "0"), "");
}

TEST(ConvergeStrategy, OnlyConvergeAndTheSearchesTakeItsParameters) {
  for (const char* strategy : {"exhaustive", "adaptive"}) {
    Measurement m;
    m.strategy = strategy;
    m.strategy_options["max_noise"] = "0.01";
    EXPECT_THROW((void)make_strategy(m), InvalidSetting) << strategy;
  }
  for (const char* strategy : {"search", "random"}) {
    Measurement m;
    m.strategy = strategy;
    m.strategy_options["max_noise"] = "0.01";
    m.strategy_options["min_time_ms"] = "1";
    EXPECT_NO_THROW((void)make_strategy(m)) << strategy;
    m.strategy_options["max_noise"] = "2";  // refused when the search is made, not at its race
    EXPECT_THROW((void)make_strategy(m), InvalidSetting) << strategy;
    m.strategy_options.erase("max_noise");
    m.strategy_options["budget_ms"] = "100";  // the search's budget is its own budget_s
    EXPECT_THROW((void)make_strategy(m), InvalidSetting) << strategy;
  }
}

TEST(ConvergeStrategy, AMaxNoiseGivenChangesWhenSamplingStops) {
  Measurement loose = converge();
  loose.strategy_options["max_noise"] = "0.05";
  Tuning strict(names(1), converge());
  Tuning relaxed(names(1), loose);
  replay_ranks({&strict}, {noisy({1.0}, 0.02, 3)});
  replay_ranks({&relaxed}, {noisy({1.0}, 0.02, 3)});
  EXPECT_LT(relaxed.results()[0].samples.size(), strict.results()[0].samples.size());
}

}  // namespace
}  // namespace disttune
