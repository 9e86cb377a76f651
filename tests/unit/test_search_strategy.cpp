// Tests of the search and random strategies and of strategy options (src/strategies/), replaying a
// made-up space.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "disttune/context.hpp"
#include "disttune/error.hpp"
#include "disttune/settings.hpp"
#include "disttune/strategy.hpp"
#include "disttune/tuning.hpp"
#include "strategies/compile_cost_model.hpp"
#include "strategies/config_features.hpp"
#include "strategies/feasibility_model.hpp"
#include "strategies/flat_knobs.hpp"
#include "strategies/gaussian_process_model.hpp"
#include "strategies/late_fastest.hpp"
#include "strategies/regression_forest.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

/// A made-up space of 300 configs shaped like a kernel's: a bowl in BLOCK (log2), WARPS
/// (log2) and STAGES with a categorical MODE; the fastest is BLOCK 64, WARPS 4, MODE "b",
/// STAGES 3 (1 ms). BLOCK 256 with STAGES >= 4 "does not fit" (fails).
struct Space {
  std::vector<std::string> configs;
  std::vector<double> times;
  std::vector<std::size_t> failing;
};

Space bowl() {
  Space space;
  for (int block : {16, 32, 64, 128, 256}) {
    for (int warps : {1, 2, 4, 8}) {
      for (const char* mode : {"a", "b", "c"}) {
        for (int stages = 1; stages <= 5; ++stages) {
          space.configs.push_back(canonical_json(Value{
              {"cfg", {{"BLOCK", block}, {"WARPS", warps}, {"MODE", mode}, {"STAGES", stages}}}}));
          const double b = std::log2(block) - 6;
          const double w = std::log2(warps) - 2;
          space.times.push_back(1.0 + 0.5 * b * b + 0.3 * w * w +
                                (std::string(mode) == "b" ? 0.0 : 0.4) +
                                0.1 * (stages - 3) * (stages - 3));
          if (block == 256 && stages >= 4) space.failing.push_back(space.configs.size() - 1);
        }
      }
    }
  }
  return space;
}

/// bowl() with half of it failing: MODE "c" everywhere, and the big tiles (BLOCK 256).
Space half_failing() {
  Space space = bowl();
  space.failing.clear();
  for (std::size_t c = 0; c < space.configs.size(); ++c) {
    if (space.configs[c].find("\"c\"") != std::string::npos ||
        space.configs[c].find("256") != std::string::npos) {
      space.failing.push_back(c);
    }
  }
  return space;
}

Measurement search(std::map<std::string, std::string> options = {}) {
  Measurement m;
  m.strategy = "search";
  m.strategy_options = std::move(options);
  return m;
}

std::vector<std::vector<double>> as_runs(const std::vector<double>& times) {
  std::vector<std::vector<double>> runs;
  for (double t : times) runs.push_back({t});
  return runs;
}

std::size_t measured(const Tuning& tuning) {
  const auto& results = tuning.results();
  return static_cast<std::size_t>(std::count_if(
      results.begin(), results.end(), [](const CandidateResult& r) { return r.measured; }));
}

std::size_t measured_failures(const Tuning& tuning) {
  const auto& results = tuning.results();
  return static_cast<std::size_t>(
      std::count_if(results.begin(), results.end(),
                    [](const CandidateResult& r) { return r.measured && r.failed; }));
}

/// bowl()'s 300 configs at fraction 0.1: the budget, and the most it grows to when the fastest
/// is found late (after_fastest: 10/9 of the share).
constexpr std::size_t kTenthOfTheBowl = 30;
constexpr std::size_t kGrownTenthOfTheBowl = 33;

TEST(SearchStrategy, MeasuresItsBudgetOnlyAndFindsTheFastest) {
  const Space space = bowl();
  Tuning tuning(space.configs, search({{"fraction", "0.1"}, {"after_fastest", "0"}}));  // 30 of 300
  simulation::replay(tuning, as_runs(space.times), space.failing);
  EXPECT_EQ(measured(tuning), kTenthOfTheBowl);
  ASSERT_TRUE(tuning.best());
  EXPECT_DOUBLE_EQ(space.times[*tuning.best()], 1.0);
  // The engine never ran the candidates the search did not name.
  for (const CandidateResult& result : tuning.results()) {
    if (!result.measured) {
      EXPECT_TRUE(result.samples.empty());
    }
  }
}

// after_fastest: once the budget is spent, the search goes on while its fastest so far was named
// among the last `after_fastest` candidates, up to 10/9 of its share of the space, so that a
// fastest found late has its neighbours measured before the race.
TEST(SearchStrategy, AFastestFoundLateGrowsTheBudgetToAtMostTenNinthsOfIt) {
  EXPECT_EQ(detail::budget_after_fastest(30, 20, 19, 16, 33), 30u);  // not spent yet
  EXPECT_EQ(detail::budget_after_fastest(30, 30, 10, 16, 33), 30u);  // found 20 names ago
  EXPECT_EQ(detail::budget_after_fastest(30, 30, 15, 16, 33), 31u);
  EXPECT_EQ(detail::budget_after_fastest(30, 30, 28, 16, 33), 33u);  // at most `most`
  EXPECT_EQ(detail::budget_after_fastest(30, 33, 28, 16, 33), 33u);
  EXPECT_EQ(detail::budget_after_fastest(30, 30, 30, 0, 33), 30u);   // after_fastest 0: none
  EXPECT_EQ(detail::budget_after_fastest(24, 24, 24, 16, 19), 24u);  // never below the budget

  const Space space = bowl();
  std::set<std::size_t> counts;
  for (int seed = 0; seed < 10; ++seed) {
    const std::string s = std::to_string(seed);
    Tuning grown(space.configs, search({{"fraction", "0.1"}, {"seed", s}}));
    Tuning fixed(space.configs, search({{"fraction", "0.1"}, {"seed", s}, {"after_fastest", "0"}}));
    simulation::replay(grown, as_runs(space.times), space.failing);
    simulation::replay(fixed, as_runs(space.times), space.failing);
    EXPECT_EQ(measured(fixed), kTenthOfTheBowl) << seed;
    EXPECT_GE(measured(grown), kTenthOfTheBowl) << seed;
    EXPECT_LE(measured(grown), kGrownTenthOfTheBowl) << seed;
    counts.insert(measured(grown));
  }
  EXPECT_GT(*counts.rbegin(), kTenthOfTheBowl);  // some seeds found their fastest late
  EXPECT_THROW((void)make_strategy(search({{"after_fastest", "-1"}})), InvalidSetting);
  EXPECT_THROW((void)make_strategy(search({{"after_fastest", "2.5"}})), InvalidSetting);
}

TEST(SearchStrategy, BeatsRandomSearchOnTheSameBudget) {
  const Space space = bowl();
  double searched = 0.0;
  double drawn = 0.0;
  for (int seed = 0; seed < 5; ++seed) {
    Tuning by_search(space.configs, search({{"seed", std::to_string(seed)}}));
    Measurement random = search({{"seed", std::to_string(seed)}});
    random.strategy = "random";
    Tuning by_random(space.configs, random);
    simulation::replay(by_search, as_runs(space.times), space.failing);
    simulation::replay(by_random, as_runs(space.times), space.failing);
    EXPECT_EQ(measured(by_search), measured(by_random));
    searched += space.times[by_search.best().value()];
    drawn += space.times[by_random.best().value()];
  }
  EXPECT_LT(searched, drawn);
}

TEST(SearchStrategy, LearnsFromFailures) {
  // Half the space fails (MODE "c" everywhere, and the big tiles): the search, which counts
  // failures as bad outcomes, names fewer failing configs than random search.
  const Space space = half_failing();
  std::size_t search_failures = 0;
  std::size_t random_failures = 0;
  for (int seed = 0; seed < 5; ++seed) {
    Tuning by_search(space.configs, search({{"seed", std::to_string(seed)}, {"fraction", "0.15"}}));
    Measurement random = search({{"seed", std::to_string(seed)}, {"fraction", "0.15"}});
    random.strategy = "random";
    Tuning by_random(space.configs, random);
    simulation::replay(by_search, as_runs(space.times), space.failing);
    simulation::replay(by_random, as_runs(space.times), space.failing);
    search_failures += measured_failures(by_search);
    random_failures += measured_failures(by_random);
  }
  EXPECT_LT(search_failures, random_failures);
}

TEST(SearchStrategy, TheSameSeedTakesTheSameRoundsAnotherSeedOthers) {
  const Space space = bowl();
  Tuning first(space.configs, search({{"seed", "3"}}));
  Tuning again(space.configs, search({{"seed", "3"}}));
  Tuning other(space.configs, search({{"seed", "4"}}));
  const std::string trace = simulation::replay(first, as_runs(space.times), space.failing);
  EXPECT_EQ(simulation::replay(again, as_runs(space.times), space.failing), trace);
  EXPECT_NE(simulation::replay(other, as_runs(space.times), space.failing), trace);
}

TEST(SearchStrategy, TwoRanksTakeTheSameRounds) {
  const Space space = bowl();
  Tuning rank0(space.configs, search());
  Tuning rank1(space.configs, search());
  const auto times = space.times;
  simulation::replay_ranks({&rank0, &rank1},
                           {simulation::noisy(times, 0.01, 1), simulation::noisy(times, 0.01, 2)});
  EXPECT_EQ(rank0.best(), rank1.best());
}

// Also when the start sample (20 of 60 at fraction 0.2) is more than the first round takes (16).
TEST(SearchStrategy, ThePriorAndTheBaselineAreInTheFirstRound) {
  const Space space = bowl();
  for (const char* fraction : {"0.08", "0.2"}) {
    Measurement m = search({{"fraction", fraction}});
    m.baseline = space.configs[42];
    std::unique_ptr<Strategy> strategy = make_strategy(m);
    strategy->begin(SpaceInfo{space.configs, {250, 7}, 0});
    const Round first = strategy->first_round(space.configs.size());
    for (std::size_t c : {std::size_t{42}, std::size_t{250}, std::size_t{7}}) {
      EXPECT_NE(std::find(first.candidates.begin(), first.candidates.end(), c),
                first.candidates.end())
          << fraction << ": " << c;
    }
    EXPECT_TRUE(std::is_sorted(first.candidates.begin(), first.candidates.end()));
  }
}

TEST(SearchStrategy, ASlowBaselineRacesAndLoses) {
  const Space space = bowl();
  Measurement m = search();
  m.baseline = space.configs[0];  // BLOCK 16, WARPS 1: among the slowest
  Tuning tuning(space.configs, m);
  simulation::replay(tuning, as_runs(space.times), space.failing);
  EXPECT_GT(tuning.results()[0].samples.size(), 3u);  // its exploring samples, then the race's
  EXPECT_NE(tuning.best(), 0u);
}

TEST(SearchStrategy, AheadNamesUnmeasuredCandidatesWhileExploring) {
  const Space space = bowl();
  std::unique_ptr<Strategy> strategy = make_strategy(search());
  strategy->begin(SpaceInfo{space.configs, {}, 0});
  const Round first = strategy->first_round(space.configs.size());
  std::vector<CandidateStanding> standings(space.configs.size());
  for (std::size_t c : first.candidates) standings[c] = {false, space.times[c], 0.0, 3};
  const Round second = strategy->next_round(standings);
  const std::vector<std::size_t> ahead = strategy->ahead();
  ASSERT_FALSE(ahead.empty());
  std::set<std::size_t> named(first.candidates.begin(), first.candidates.end());
  named.insert(second.candidates.begin(), second.candidates.end());
  for (std::size_t c : ahead) EXPECT_EQ(named.count(c), 0u) << c;
}

// ahead() speculates: when a round's picks come back the fastest so far, the next round's
// picks move towards them, and they were already named ahead during that round.
TEST(SearchStrategy, AheadForeseesTheNextRoundWhenThisRoundIsFastest) {
  const Space space = bowl();
  std::unique_ptr<Strategy> strategy = make_strategy(search({{"fraction", "0.15"}}));
  strategy->begin(SpaceInfo{space.configs, {}, 0});
  const Round first = strategy->first_round(space.configs.size());
  std::vector<CandidateStanding> standings(space.configs.size());
  double best = 1e9;
  for (std::size_t c : first.candidates) {
    standings[c] = {false, space.times[c], 0.0, 3};
    best = std::min(best, space.times[c]);
  }
  const Round second = strategy->next_round(standings);
  const std::vector<std::size_t> ahead = strategy->ahead();
  for (std::size_t c : second.candidates) standings[c] = {false, 0.5 * best, 0.0, 3};
  const Round third = strategy->next_round(standings);
  ASSERT_FALSE(third.candidates.empty());
  for (std::size_t c : third.candidates) {
    EXPECT_NE(std::find(ahead.begin(), ahead.end(), c), ahead.end()) << c;
  }
}

/// Whether bowl() configs `a` and `b` are one level apart in one parameter (its index is
/// ((BLOCK * 4 + WARPS) * 3 + MODE) * 5 + STAGES, in levels).
bool bowl_neighbours(std::size_t a, std::size_t b) {
  int steps = 0;
  for (const std::size_t radix : {5u, 3u, 4u, 5u}) {
    const int gap = static_cast<int>(a % radix) - static_cast<int>(b % radix);
    steps += radix == 3u ? (gap != 0 ? 1 : 0) : std::abs(gap);  // MODE is categorical
    a /= radix;
    b /= radix;
  }
  return steps == 1;
}

// In polish (the last 30% of the budget: 18 of 60 here) each round takes neighbours of the
// three fastest so far, which ahead() named during the round before. Before the race,
// ahead() names nothing (its shortlist is compiled).
TEST(SearchStrategy, AheadNamesTheNeighboursThatTheNextPolishRoundTakes) {
  const Space space = bowl();
  std::unique_ptr<Strategy> strategy = make_strategy(search({{"fraction", "0.2"}}));  // 60
  strategy->begin(SpaceInfo{space.configs, {}, 0});
  Round round = strategy->first_round(space.configs.size());
  std::vector<CandidateStanding> standings(space.configs.size());
  std::vector<std::size_t> ran;  // fastest first
  std::set<std::size_t> named;
  std::size_t foreseen = 0;
  std::vector<std::size_t> ahead;
  while (named.size() < 60) {
    const bool polishing = named.size() >= 60 - 18;
    for (std::size_t c : round.candidates) {
      const bool near = std::any_of(
          ran.begin(),
          ran.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, ran.size())),
          [c](std::size_t centre) { return bowl_neighbours(c, centre); });
      if (polishing && near) {
        EXPECT_NE(std::find(ahead.begin(), ahead.end(), c), ahead.end()) << c;
        ++foreseen;
      }
    }
    for (std::size_t c : round.candidates) {
      named.insert(c);
      const bool fails =
          std::find(space.failing.begin(), space.failing.end(), c) != space.failing.end();
      standings[c] = {fails, space.times[c], 0.0, 3};
      if (!fails) ran.push_back(c);
    }
    std::stable_sort(ran.begin(), ran.end(),
                     [&](std::size_t x, std::size_t y) { return space.times[x] < space.times[y]; });
    ahead = strategy->ahead();
    if (named.size() == 60) {
      EXPECT_TRUE(ahead.empty());
    }
    round = strategy->next_round(standings);
  }
  EXPECT_GE(foreseen, 4u);  // a polish round's worth were checked
}

// The compile cost model predicts from the compiles seen near a candidate: in a space of
// BLOCK 16..2048 whose compiles were seen to take 1 s at 16 and 8 s at 2048, the nearer a
// block to 2048 the slower its prediction, and nothing is predicted before any compile.
TEST(CompileCostModel, PredictsFromTheCompilesSeenNearACandidate) {
  std::vector<std::string> configs;
  for (int block = 16; block <= 2048; block *= 2) configs.push_back(canonical_json(Value{{"BLOCK", block}}));
  const detail::ConfigFeatures features = detail::config_features(configs);
  EXPECT_DOUBLE_EQ(detail::CompileCostModel(features, {}).seconds(3), 0.0);
  const detail::CompileCostModel model(features, {{0, 1.0}, {7, 8.0}});
  // Shrunk towards the mean of both (sqrt 8 = 2.83 s) by one pseudo-observation.
  EXPECT_GE(model.seconds(0), 1.0);
  EXPECT_LT(model.seconds(0), model.seconds(1));
  EXPECT_LT(model.seconds(1), model.seconds(6));
  EXPECT_LT(model.seconds(6), model.seconds(7));
  EXPECT_LE(model.seconds(7), 8.0);
}

/// A space of BLOCK 16 .. 2048 (levels 0 .. 7) and the model over `times` measured at the
/// blocks of `measured` (levels), `failed` (levels) failing.
struct BlockLine {
  detail::ConfigFeatures features;
  std::vector<detail::Observation> observed;
};

BlockLine block_line(const std::vector<std::pair<std::size_t, double>>& measured,
                     const std::vector<std::size_t>& failed = {}) {
  std::vector<std::string> configs;
  for (int block = 16; block <= 2048; block *= 2)
    configs.push_back(canonical_json(Value{{"BLOCK", block}}));
  BlockLine line{detail::config_features(configs), {}};
  for (const auto& [level, time_ms] : measured) line.observed.push_back({level, false, time_ms});
  for (std::size_t level : failed) line.observed.push_back({level, true, 0.0});
  return line;
}

// The Gaussian process model (model=gp) ranks first the unmeasured block next to the fastest
// along the trend: times halving from BLOCK 16 to 64 make BLOCK 128 the most promising block,
// ahead of those farther on; a failure next to a block lowers that block's score.
TEST(GaussianProcessModel, FollowsATrendAndAvoidsFailures) {
  const BlockLine line = block_line({{0, 8.0}, {1, 4.0}, {2, 2.0}});
  const detail::GaussianProcessModel model(line.features, line.observed);
  for (std::size_t level = 4; level < 8; ++level)
    EXPECT_GT(model.log_score(3), model.log_score(level)) << level;
  const BlockLine failing = block_line({{0, 8.0}, {1, 4.0}, {2, 2.0}}, {4});
  EXPECT_LT(detail::GaussianProcessModel(failing.features, failing.observed).log_score(3),
            model.log_score(3));
}

// A search round under model=gp picks one at a time, believing the picks before at the times
// the process predicts for them: the prediction follows the measured times, and a believed
// BLOCK 128 (the best pick) makes its neighbour BLOCK 256 a worse next pick than without it.
TEST(GaussianProcessModel, PredictsTheMeasuredTimesAndABelievedPickLowersItsNeighbours) {
  const BlockLine line = block_line({{0, 8.0}, {1, 4.0}, {2, 2.0}});
  const detail::GaussianProcessModel model(line.features, line.observed);
  EXPECT_NEAR(model.predicted_log_ms(1), std::log(4.0), 0.05);
  BlockLine believed = line;
  believed.observed.push_back({3, false, std::exp(model.predicted_log_ms(3))});
  EXPECT_LT(detail::GaussianProcessModel(believed.features, believed.observed).log_score(4),
            model.log_score(4));
}

// Its length scale is chosen by the measured times' likelihood: a time that changes slowly with
// the block gets a longer one than a time that jumps from each block to the next.
TEST(GaussianProcessModel, ALengthScaleFitsTheMeasuredTimes) {
  const BlockLine smooth = block_line({{0, 1.0}, {1, 1.1}, {2, 1.3}, {3, 1.6}, {4, 2.0}, {5, 2.5}});
  const BlockLine rough = block_line({{0, 1.0}, {1, 3.0}, {2, 1.0}, {3, 3.0}, {4, 1.0}, {5, 3.0}});
  const double smooth_length =
      detail::GaussianProcessModel(smooth.features, smooth.observed).length_levels();
  const double rough_length =
      detail::GaussianProcessModel(rough.features, rough.observed).length_levels();
  EXPECT_GT(smooth_length, rough_length);
  EXPECT_DOUBLE_EQ(rough_length, detail::GaussianProcessModel::kLengthsLevels.front());
}

// The search with model=gp measures its budget, finds the bowl's fastest and names fewer
// failing configs than random search, as with the default model.
TEST(SearchStrategy, TheGaussianProcessModelFindsTheFastest) {
  const Space space = bowl();
  Tuning tuning(space.configs, search({{"fraction", "0.1"}, {"model", "gp"}}));
  simulation::replay(tuning, as_runs(space.times), space.failing);
  EXPECT_GE(measured(tuning), kTenthOfTheBowl);
  EXPECT_LE(measured(tuning), kGrownTenthOfTheBowl);
  ASSERT_TRUE(tuning.best());
  EXPECT_DOUBLE_EQ(space.times[*tuning.best()], 1.0);
  EXPECT_THROW((void)make_strategy(search({{"model", "forest"}})), InvalidSetting);
}

/// The index in bowl() of BLOCK `block`, WARPS `warps`, MODE `mode`, STAGES `stages`.
std::size_t bowl_index(const Space& space, int block, int warps, const char* mode, int stages) {
  const std::string config = canonical_json(
      Value{{"cfg", {{"BLOCK", block}, {"WARPS", warps}, {"MODE", mode}, {"STAGES", stages}}}});
  return static_cast<std::size_t>(std::find(space.configs.begin(), space.configs.end(), config) -
                                  space.configs.begin());
}

// A knob is flat when at least two measured pairs differ in it alone and their times differ
// by less than the bound on average: in bowl(), pairs that differ in STAGES alone by 0.2% make
// STAGES flat at 1%, not at 0.1%; pairs that differ in BLOCK alone by 50% do not make BLOCK
// flat; one pair is not enough; failures do not count; bound 0 makes none flat.
TEST(FlatKnobs, AreTheKnobsWhoseMeasuredPairsRunAlike) {
  const Space space = bowl();
  const detail::ConfigFeatures features = detail::config_features(space.configs);
  const std::size_t a = bowl_index(space, 64, 4, "b", 3);
  const std::size_t a_stages = bowl_index(space, 64, 4, "b", 4);
  const std::size_t b = bowl_index(space, 32, 4, "a", 3);
  const std::size_t b_stages = bowl_index(space, 32, 4, "a", 2);
  const std::size_t a_block = bowl_index(space, 128, 4, "b", 3);
  const std::size_t b_block = bowl_index(space, 16, 4, "a", 3);
  ASSERT_EQ(features.only_difference(a, a_stages), features.only_difference(b, b_stages));
  ASSERT_EQ(features.only_difference(a, a_block), features.only_difference(b, b_block));
  EXPECT_EQ(features.only_difference(a, b), -1);  // BLOCK and MODE
  EXPECT_EQ(features.only_difference(a, a), -1);
  const auto stages = static_cast<std::size_t>(features.only_difference(a, a_stages));
  const auto block = static_cast<std::size_t>(features.only_difference(a, a_block));
  const std::vector<detail::Observation> observed{{a, false, 1.000},       {a_stages, false, 1.002},
                                                  {b, false, 2.000},       {b_stages, false, 2.004},
                                                  {a_block, false, 1.500}, {b_block, false, 3.000}};
  const std::vector<bool> flat = detail::flat_knobs(features, observed, 0.01);
  ASSERT_EQ(flat.size(), features.dimensions());
  EXPECT_TRUE(flat[stages]);
  EXPECT_FALSE(flat[block]);
  EXPECT_FALSE(detail::flat_knobs(features, observed, 0.001)[stages]);
  EXPECT_FALSE(detail::flat_knobs(features, observed, 0.0)[stages]);
  const std::vector<detail::Observation> one_pair(observed.begin(), observed.begin() + 2);
  EXPECT_FALSE(detail::flat_knobs(features, one_pair, 0.01)[stages]);
  std::vector<detail::Observation> one_failed = observed;
  one_failed[3].failed = true;
  EXPECT_FALSE(detail::flat_knobs(features, one_failed, 0.01)[stages]);
  // Configs that differ along flat knobs only are twins (polish takes one of them as a centre).
  EXPECT_TRUE(detail::flat_twins(features, a, bowl_index(space, 64, 4, "b", 1), flat));
  EXPECT_TRUE(detail::flat_twins(features, a, a, flat));
  EXPECT_FALSE(detail::flat_twins(features, a, a_block, flat));
  EXPECT_FALSE(detail::flat_twins(features, a, bowl_index(space, 64, 4, "c", 1), flat));
}

// A regression forest is a function of its inputs and seed (ranks grow the same trees), and it
// learns a threshold: targets 1 up to BLOCK 64 and 0 from 128, measured at 16, 32 and 256,
// 512 and 1024, put the unmeasured BLOCK 2048 with the zeros.
TEST(RegressionForest, LearnsAThresholdAndIsAFunctionOfItsSeed) {
  std::vector<std::string> configs;
  for (int block = 16; block <= 2048; block *= 2) configs.push_back(canonical_json(Value{{"BLOCK", block}}));
  const detail::ConfigFeatures features = detail::config_features(configs);
  const std::vector<std::size_t> measured{0, 1, 2, 4, 5, 6};
  const std::vector<double> targets{1.0, 1.0, 1.0, 0.0, 0.0, 0.0};
  const detail::RegressionForest forest(features, measured, targets, 7);
  const detail::RegressionForest again(features, measured, targets, 7);
  for (std::size_t c = 0; c < configs.size(); ++c) {
    EXPECT_DOUBLE_EQ(forest.predict(c).mean, again.predict(c).mean) << c;
    EXPECT_DOUBLE_EQ(forest.predict(c).variance, again.predict(c).variance) << c;
  }
  EXPECT_LT(forest.predict(7).mean, 0.2);
  EXPECT_GT(forest.predict(0).mean, 0.8);
  EXPECT_TRUE(detail::RegressionForest(features, {}, {}, 7).empty());
}

// feasibility=forest: MODE "c" failed wherever it was measured (BLOCK 16 and 32), so an
// unmeasured MODE "c" config far from every measured one (BLOCK 256, 8 warps) is judged less
// likely to run with the forest than by the near vote alone, which is at its prior there, and
// less likely than the MODE "a" config beside it.
TEST(FeasibilityModel, AForestLearnsALimitFarFromTheMeasuredConfigs) {
  const Space space = bowl();
  const detail::ConfigFeatures features = detail::config_features(space.configs);
  std::vector<std::size_t> ran;
  std::vector<std::size_t> failed;
  for (int block : {16, 32}) {
    for (int stages : {1, 3, 5}) {
      ran.push_back(bowl_index(space, block, 1, "a", stages));
      ran.push_back(bowl_index(space, block, 2, "b", stages));
      failed.push_back(bowl_index(space, block, 1, "c", stages));
      failed.push_back(bowl_index(space, block, 2, "c", stages));
    }
  }
  const detail::FeasibilityModel near(features, ran, failed);
  const detail::FeasibilityModel forest(features, ran, failed, 0.0);
  const std::size_t far_c = bowl_index(space, 256, 8, "c", 2);
  const std::size_t far_a = bowl_index(space, 256, 8, "a", 2);
  EXPECT_NEAR(near.log_runs(far_c), std::log(0.5), 0.01);
  EXPECT_LT(forest.log_runs(far_c), near.log_runs(far_c) - 0.3);
  EXPECT_LT(forest.log_runs(far_c), forest.log_runs(far_a) - 0.3);
  // With no failure seen, the forest is not grown: the near vote alone; nor with fewer
  // failures than its share (here half failed: grown from 0.2, feasibility=auto's, not from 0.6).
  const detail::FeasibilityModel none(features, ran, {}, 0.0);
  EXPECT_DOUBLE_EQ(none.log_runs(far_c), detail::FeasibilityModel(features, ran, {}).log_runs(far_c));
  EXPECT_DOUBLE_EQ(detail::FeasibilityModel(features, ran, failed, 0.6).log_runs(far_c), near.log_runs(far_c));
  EXPECT_DOUBLE_EQ(
      detail::FeasibilityModel(features, ran, failed, detail::FeasibilityModel::kAutoForestFrom).log_runs(far_c),
      forest.log_runs(far_c));
}

// The search with feasibility=forest measures its budget, finds the bowl's fastest, and on a
// space where MODE "c" and BLOCK 256 fail it names fewer failing configs than the near vote
// alone (feasibility=near) and than random search.
TEST(SearchStrategy, TheForestFeasibilityFindsTheFastestAndAvoidsFailures) {
  const Space space = bowl();
  Tuning tuning(space.configs, search({{"fraction", "0.1"}, {"feasibility", "forest"}}));
  simulation::replay(tuning, as_runs(space.times), space.failing);
  EXPECT_GE(measured(tuning), kTenthOfTheBowl);
  EXPECT_LE(measured(tuning), kGrownTenthOfTheBowl);
  ASSERT_TRUE(tuning.best());
  EXPECT_DOUBLE_EQ(space.times[*tuning.best()], 1.0);
  EXPECT_THROW((void)make_strategy(search({{"feasibility", "trees"}})), InvalidSetting);
  EXPECT_NO_THROW((void)make_strategy(search({{"feasibility", "auto"}})));

  const Space failing = half_failing();
  std::size_t forest_failures = 0;
  std::size_t near_failures = 0;
  std::size_t random_failures = 0;
  for (int seed = 0; seed < 5; ++seed) {
    const std::map<std::string, std::string> options{{"seed", std::to_string(seed)}, {"fraction", "0.15"}};
    std::map<std::string, std::string> with_forest = options;
    with_forest["feasibility"] = "forest";
    std::map<std::string, std::string> near_only = options;
    near_only["feasibility"] = "near";
    Tuning by_forest(failing.configs, search(with_forest));
    Tuning by_near(failing.configs, search(near_only));
    Measurement random = search(options);
    random.strategy = "random";
    Tuning by_random(failing.configs, random);
    simulation::replay(by_forest, as_runs(failing.times), failing.failing);
    simulation::replay(by_near, as_runs(failing.times), failing.failing);
    simulation::replay(by_random, as_runs(failing.times), failing.failing);
    forest_failures += measured_failures(by_forest);
    near_failures += measured_failures(by_near);
    random_failures += measured_failures(by_random);
  }
  std::cout << "failing configs named over 5 seeds: forest " << forest_failures << ", near " << near_failures
            << ", random " << random_failures << "\n";
  EXPECT_LT(forest_failures, near_failures);
  EXPECT_LT(forest_failures, random_failures);
}

/// The second round of a search over bowl() with `options` (seed 0), after a first round whose
/// candidates took their bowl times, when only the candidates `prepared` says are prepared.
std::vector<std::size_t> second_round(const std::map<std::string, std::string>& options,
                                      const std::function<bool(std::size_t)>& prepared) {
  const Space space = bowl();
  const std::unique_ptr<Strategy> strategy = make_strategy(search(options));
  strategy->begin(SpaceInfo{space.configs, {}, 0});
  const Round first = strategy->first_round(space.configs.size());
  std::vector<CandidateStanding> standings(space.configs.size());
  for (std::size_t c = 0; c < standings.size(); ++c) standings[c].prepared = prepared(c);
  for (std::size_t c : first.candidates) {
    standings[c].time_ms = space.times[c];
    standings[c].samples = 3;
    standings[c].failed = std::find(space.failing.begin(), space.failing.end(), c) != space.failing.end();
  }
  return strategy->next_round(standings).candidates;
}

// prepared_window 2: a round takes the best-ranked candidates that are prepared (compiled)
// before better-ranked ones that are not, from two rounds' worth of the ranking; the default
// (1) takes the best-ranked whatever is prepared.
TEST(SearchStrategy, ARoundTakesPreparedCandidatesFirstWithinItsWindow) {
  const std::map<std::string, std::string> options{{"fraction", "0.15"}, {"prepared_window", "2"}};
  const std::vector<std::size_t> best = second_round(options, [](std::size_t) { return true; });
  ASSERT_EQ(best.size(), 4u);
  const auto not_best = [&](std::size_t c) { return std::find(best.begin(), best.end(), c) == best.end(); };
  const std::vector<std::size_t> ready = second_round(options, not_best);
  ASSERT_EQ(ready.size(), 4u);
  for (std::size_t c : ready) EXPECT_TRUE(not_best(c)) << c;
  EXPECT_EQ(second_round({{"fraction", "0.15"}}, not_best), best);
}

/// The first three rounds of a search over bowl() (budget 60: a start sample of 20) whose
/// compiles each took `compile_s` (0: the front end tells no compile times), and what ahead()
/// named during the first.
struct StartRounds {
  Round first, second, third;
  std::vector<std::size_t> ahead_of_first;
};

StartRounds start_rounds(double compile_s) {
  const Space space = bowl();
  const std::unique_ptr<Strategy> strategy = make_strategy(search({{"fraction", "0.2"}}));
  strategy->begin(SpaceInfo{space.configs, {}, 0});
  StartRounds rounds;
  rounds.first = strategy->first_round(space.configs.size());
  rounds.ahead_of_first = strategy->ahead();
  std::vector<CandidateStanding> standings(space.configs.size());
  for (CandidateStanding& standing : standings) standing.prepared = false;
  const auto measure = [&](const Round& round) {
    for (std::size_t c : round.candidates) {
      const bool fails = std::find(space.failing.begin(), space.failing.end(), c) != space.failing.end();
      standings[c] = {fails, space.times[c], 0.0, 3};
      standings[c].prepared = true;
      standings[c].prepare_s = compile_s;
    }
  };
  measure(rounds.first);
  rounds.second = strategy->next_round(standings);
  measure(rounds.second);
  rounds.third = strategy->next_round(standings);
  return rounds;
}

// The start sample beyond the compile threads (its 20 less 16) compiles during the first round
// (named ahead) and is measured in the second. Compiles of c seconds (their geometric mean)
// spread the rest of the budget evenly over floor(12 s / c) rounds, and the budget grows by
// 10/9 (60 to 66 of 300): at 3 s, 46 candidates over 4 rounds of 12 (the second's 12 fill the
// threads beside the start sample's 4), at 1.6 s over 7 rounds of 7, the first of them in the
// second round beside the start sample's rest. Quicker compiles (24 rounds at 0.5 s), or none
// told, keep rounds of `batch` (4) after the start sample.
TEST(SearchStrategy, SlowCompilesSpreadTheBudgetOverFewerWiderRounds) {
  for (const double compile_s : {0.0, 0.5, 1.6, 3.0}) {
    const StartRounds rounds = start_rounds(compile_s);
    ASSERT_EQ(rounds.first.candidates.size(), 16u) << compile_s;
    ASSERT_EQ(rounds.ahead_of_first.size(), 4u) << compile_s;
    std::set<std::size_t> second(rounds.second.candidates.begin(), rounds.second.candidates.end());
    for (std::size_t c : rounds.ahead_of_first) EXPECT_EQ(second.count(c), 1u) << compile_s << ": " << c;
    for (std::size_t c : rounds.first.candidates) EXPECT_EQ(second.count(c), 0u) << compile_s << ": " << c;
    const std::size_t wide = compile_s == 3.0 ? 12 : compile_s == 1.6 ? 7 : 4;
    EXPECT_EQ(rounds.second.candidates.size(), wide > 4 ? 4 + wide : 4) << compile_s;
    EXPECT_EQ(rounds.third.candidates.size(), wide) << compile_s;
  }
}

// A pick left out of a round while it still compiled (Round::leave_unprepared) is in the first
// round after its compile ended, not in the next one whatever it is doing: a round does not
// wait on that compile twice.
TEST(SearchStrategy, ALeftOutPickJoinsTheFirstRoundAfterItsCompileEnded) {
  const Space space = bowl();
  const std::unique_ptr<Strategy> strategy = make_strategy(search({{"fraction", "0.15"}}));
  strategy->begin(SpaceInfo{space.configs, {}, 0});
  const Round first = strategy->first_round(space.configs.size());
  ASSERT_TRUE(first.leave_unprepared.has_value());  // no compile seen: only a far slower one waits
  const std::size_t slow = first.candidates.back();
  std::vector<CandidateStanding> standings(space.configs.size());
  for (CandidateStanding& standing : standings) standing.prepared = false;
  const auto measure = [&](const Round& round) {
    for (std::size_t c : round.candidates) {
      standings[c] = {false, space.times[c], 0.0, 3};
      standings[c].prepare_s = 1.0;
    }
  };
  measure(first);
  standings[slow] = CandidateStanding{};
  standings[slow].prepared = false;
  standings[slow].left_out = true;
  const Round second = strategy->next_round(standings);
  EXPECT_EQ(std::count(second.candidates.begin(), second.candidates.end(), slow), 0);
  standings[slow].left_out = false;
  measure(second);
  const Round third = strategy->next_round(standings);
  EXPECT_EQ(std::count(third.candidates.begin(), third.candidates.end(), slow), 0);
  measure(third);
  standings[slow].prepared = true;
  standings[slow].prepare_s = 6.0;
  const Round fourth = strategy->next_round(standings);
  EXPECT_EQ(std::count(fourth.candidates.begin(), fourth.candidates.end(), slow), 1);
}

// The first round measures at most as many of the start sample (20 of bowl() at fraction 0.2)
// as the front end has compile threads (SpaceInfo::compile_threads, 16 unless told), the rest
// named ahead to compile meanwhile; a round's picks and the guesses named ahead of it fill at
// most that many threads.
TEST(SearchStrategy, TheFirstRoundAndTheGuessesFitTheCompileThreads) {
  const Space space = bowl();
  for (const std::size_t threads : {8u, 16u}) {
    const std::unique_ptr<Strategy> strategy = make_strategy(search({{"fraction", "0.2"}}));
    SpaceInfo info{space.configs, {}, 0};
    if (threads != 16) info.compile_threads = threads;
    strategy->begin(info);
    const Round first = strategy->first_round(space.configs.size());
    EXPECT_EQ(first.candidates.size(), threads);
    EXPECT_EQ(strategy->ahead().size(), 20 - threads);
    std::vector<CandidateStanding> standings(space.configs.size());
    for (std::size_t c : first.candidates) standings[c] = {false, space.times[c], 0.0, 3};
    const Round second = strategy->next_round(standings);
    for (std::size_t c : second.candidates) standings[c] = {false, space.times[c], 0.0, 3};
    const Round third = strategy->next_round(standings);
    EXPECT_EQ(third.candidates.size(), 4u);  // `batch`
    // 2 rounds' worth (8), at most the threads the round's 4 picks leave free.
    EXPECT_EQ(strategy->ahead().size(), std::min<std::size_t>(8, threads - 4)) << threads;
  }
}

TEST(SearchStrategy, ASpaceWithinTheBudgetIsRacedWhole) {
  Tuning tuning(simulation::names(10), search());
  simulation::replay(tuning, as_runs({5, 4, 3, 2, 1.5, 1, 6, 7, 8, 9}));
  EXPECT_EQ(measured(tuning), 10u);
  EXPECT_EQ(tuning.best(), 5u);
}

TEST(SearchStrategy, EveryCandidateFailingEndsWithNoChoice) {
  const Space space = bowl();
  std::vector<std::size_t> all(space.configs.size());
  for (std::size_t c = 0; c < all.size(); ++c) all[c] = c;
  Tuning tuning(space.configs, search());
  simulation::replay(tuning, as_runs(space.times), all);
  EXPECT_TRUE(tuning.finished());
  EXPECT_FALSE(tuning.best());
  EXPECT_EQ(measured(tuning),
            space.configs.size());  // it went on past its budget to find one that runs
}

TEST(SearchStrategy, EffortLevelsMeasureMoreOfTheSpace) {
  const Space space = bowl();
  std::vector<std::size_t> counts;
  for (const char* effort : {"quick", "default", "thorough"}) {
    Tuning tuning(space.configs, search({{"effort", effort}}));
    simulation::replay(tuning, as_runs(space.times), space.failing);
    counts.push_back(measured(tuning));
  }
  EXPECT_EQ(counts, (std::vector<std::size_t>{20, 45, 100}));  // each level's fewest
}

TEST(SearchStrategy, EveryEffortTheDropinsSettingAcceptsIsOneOfTheSearchs) {
  const Space space = bowl();
  for (const char* level : {"quick", "default", "thorough"}) {
    ::setenv("TRITON_DIST_AUTOTUNE_SEARCH_EFFORT", level, 1);
    const std::optional<std::string> effort = search_effort_setting();
    ::unsetenv("TRITON_DIST_AUTOTUNE_SEARCH_EFFORT");
    ASSERT_TRUE(effort);
    Tuning tuning(space.configs, search({{"effort", *effort}}));
    simulation::replay(tuning, as_runs(space.times), space.failing);
    EXPECT_TRUE(tuning.best()) << level;
  }
}

TEST(SearchStrategy, DeviceSecondsBudgetStopsExploring) {
  const Space space = bowl();
  // Each explored candidate costs 4 runs of >= 1 ms: 0.001 s is spent by the first round.
  Tuning tuning(space.configs, search({{"budget_s", "0.001"}}));
  simulation::replay(tuning, as_runs(space.times), space.failing);
  EXPECT_EQ(measured(tuning), 15u);  // the first round (a third of 45, at least one batch)
}

TEST(StrategyOptions, UnknownNamesAndBadValuesAreRefusedByName) {
  Measurement m = search({{"efort", "quick"}});
  try {
    (void)make_strategy(m);
    FAIL() << "an unknown option was accepted";
  } catch (const InvalidSetting& error) {
    EXPECT_NE(std::string(error.what()).find("'efort'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("effort"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)make_strategy(search({{"effort", "huge"}})), InvalidSetting);
  EXPECT_THROW((void)make_strategy(search({{"fraction", "0"}})), InvalidSetting);
  EXPECT_THROW((void)make_strategy(search({{"fraction", "1.5"}})), InvalidSetting);
  EXPECT_THROW((void)make_strategy(search({{"batch", "2.5"}})), InvalidSetting);
  EXPECT_THROW((void)make_strategy(search({{"seed", "-1"}})), InvalidSetting);
  for (const char* name : {"exhaustive", "adaptive", "converge"}) {
    Measurement other;
    other.strategy = name;
    other.strategy_options = {{"seed", "5"}};
    EXPECT_NO_THROW((void)make_strategy(other)) << name;
    other.strategy_options = {{"effort", "quick"}};
    EXPECT_THROW((void)make_strategy(other), InvalidSetting) << name;
  }
  EXPECT_EQ(strategy_seed(search({{"seed", "18446744073709551615"}})), 18446744073709551615u);
}

TEST(StrategyOptions, ContextualTuningTakesAStrategyByName) {
  ContextOptions options;
  options.strategy = "search";
  options.strategy_options = {{"effort", "quick"}};
  EXPECT_NO_THROW(ContextualAutotuner("outer", options));
  options.strategy = "no-such-strategy";
  EXPECT_THROW(ContextualAutotuner("outer", options), InvalidSetting);
  options.strategy = "search";
  options.strategy_options = {{"effort", "huge"}};
  EXPECT_THROW(ContextualAutotuner("outer", options), InvalidSetting);
}

}  // namespace
}  // namespace disttune
