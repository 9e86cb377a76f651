// Tests of intervals and the choice among near-ties (src/strategies/noise_interval.cpp), and of the baseline rule in tunings.
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/tuning.hpp"
#include "strategies/noise_interval.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

using detail::choose_within_noise;
using detail::TimeEstimate;

std::vector<std::string> names(std::size_t count) {
  std::vector<std::string> list;
  for (std::size_t i = 0; i < count; ++i) list.push_back("{\"c\":" + std::to_string(i) + "}");
  return list;
}

/// Samples alternating around `base`: base * (1 - noise), base * (1 + noise), ...
std::vector<double> around(double base, double noise) {
  return {base * (1 - noise), base * (1 + noise), base * (1 - noise), base * (1 + noise), base};
}

TEST(NoiseInterval, MoreSamplesNarrowTheInterval) {
  const TimeEstimate few{1.0, 0.01, 4};
  const TimeEstimate many{1.0, 0.01, 400};
  EXPECT_GT(detail::relative_standard_error(few) / detail::relative_standard_error(many), 10.0);
  EXPECT_FALSE(detail::clearly_faster({1.0, 0.01, 4}, {1.01, 0.01, 4}, detail::kTieWidth));
  EXPECT_TRUE(detail::clearly_faster({1.0, 0.01, 400}, {1.01, 0.01, 400}, detail::kTieWidth));
}

TEST(NoiseInterval, IdenticalSamplesStillHaveAFloorOfNoise) {
  EXPECT_GT(detail::relative_standard_error({1.0, 0.0, 2}), 0.0);
  EXPECT_FALSE(detail::clearly_faster({1.0, 0.0, 2}, {1.001, 0.0, 2}, detail::kDropWidth));
}

TEST(NoiseInterval, ChoiceAmongTiesIsTheBaselineThenTheLowestIndexOrTime) {
  const std::vector<TimeEstimate> estimates = {{1.002, 0.01, 10}, {1.0, 0.01, 10}, {2.0, 0.01, 10}};
  const std::vector<std::size_t> all = {0, 1, 2};
  EXPECT_EQ(choose_within_noise(estimates, all, std::nullopt, 0.0).chosen, 1u);
  EXPECT_EQ(choose_within_noise(estimates, all, std::nullopt, 0.005).chosen, 0u);  // 0.2% apart
  EXPECT_EQ(choose_within_noise(estimates, all, std::nullopt, 0.001).chosen, 1u);
  EXPECT_EQ(choose_within_noise(estimates, all, 0u, 0.0).chosen, 0u);
  EXPECT_EQ(choose_within_noise(estimates, all, 2u, 0.0).chosen, 1u);  // clearly slower baseline
  EXPECT_EQ(choose_within_noise(estimates, all, std::nullopt, 0.0).within_noise,
            (std::vector<std::size_t>{0, 1}));
}

TEST(Baseline, KeptWhenTheFastestIsWithinItsNoise) {
  Measurement m;
  m.strategy = "exhaustive";
  m.baseline = names(3)[2];
  Tuning tuning(names(3), m);
  simulation::replay(tuning, {around(2.0, 0.01), around(1.0, 0.02), around(1.004, 0.02)});
  EXPECT_EQ(tuning.baseline(), 2u);
  EXPECT_EQ(tuning.best(), 2u);
  EXPECT_TRUE(tuning.results()[1].within_noise);
  EXPECT_TRUE(tuning.results()[2].within_noise);
}

TEST(Baseline, ReplacedByACandidateFasterBeyondTheNoise) {
  Measurement m;
  m.strategy = "exhaustive";
  m.baseline = names(3)[0];
  Tuning tuning(names(3), m);
  simulation::replay(tuning, {around(1.2, 0.005), around(1.0, 0.005), around(1.1, 0.005)});
  EXPECT_EQ(tuning.best(), 1u);
  EXPECT_FALSE(tuning.results()[0].within_noise);
}

TEST(Baseline, WithoutItExhaustiveKeepsTheLowestTime) {
  Measurement m;
  m.strategy = "exhaustive";
  Tuning tuning(names(2), m);
  simulation::replay(tuning, {around(1.004, 0.02), around(1.0, 0.02)});
  EXPECT_EQ(tuning.best(), 1u);  // the spec's rule, near-tie marked only
  EXPECT_TRUE(tuning.results()[0].within_noise);
  EXPECT_FALSE(tuning.baseline().has_value());
}

TEST(Baseline, TheConvergeStrategyKeepsATiedBaseline) {
  Measurement m;
  m.strategy = "converge";
  m.baseline = names(3)[2];
  Tuning tuning(names(3), m);
  simulation::replay(tuning, {around(2.0, 0.01), around(1.0, 0.01), around(1.0005, 0.01)});
  EXPECT_EQ(tuning.best(), 2u);
}

TEST(Baseline, PrunedForThisKeyMeansNone) {
  Measurement m;
  m.strategy = "exhaustive";
  m.baseline = "{\"c\":99}";
  Tuning tuning(names(2), m);
  simulation::replay(tuning, {{2.0}, {1.0}});
  EXPECT_FALSE(tuning.baseline().has_value());
  EXPECT_EQ(tuning.best(), 1u);
}

}  // namespace
}  // namespace disttune
