// The search's feasibility model: how likely an unmeasured config is to run, from the measured
// configs near it.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "strategies/config_features.hpp"
#include "strategies/regression_forest.hpp"

namespace disttune::detail {

/// Whether a config runs at all (out of resources, compile errors...) depends on joint
/// limits such as block sizes times stages against shared memory, so it is judged from the
/// measured configs near a candidate in all dimensions at once, not per dimension: a Parzen
/// vote (Gaussian kernel over the distance in levels) of those that ran against those that
/// failed, with a flat prior of half a vote each. Kept apart from the speed model so that
/// failures lower the score of their neighbourhood only, not of every config sharing one of
/// their parameter values (a fast config often sits next to the configs that do not fit).
///
/// Once at least a share `forest_from` of the measured configs failed (the search's option
/// feasibility: forest 0, auto kAutoForestFrom, near never), the chance is half that vote and
/// half a RegressionForest of ran (1) against failed (0), at least kLeastForestChance: trees
/// split on thresholds and sets of categories, so they also learn a limit far from any
/// measured neighbour ("PROMOTE every_4 fails", "BLOCK_N 256 with 5 stages fails"), where the
/// vote, whose kernel is one level wide, is near its prior. The forest is grown only once
/// something failed and something ran.
class FeasibilityModel {
 public:
  /// The forest's share of the chance, and the least chance it gives (a leaf of failures
  /// is not certain).
  static constexpr double kForestShare = 0.5;
  static constexpr double kLeastForestChance = 0.02;
  /// forest_from: never a forest; feasibility=auto's share of failures (on the recorded tables
  /// only the fp8 matmul's and softmax's tunings reach it, docs/strategies.md).
  static constexpr double kNoForest = std::numeric_limits<double>::infinity();
  static constexpr double kAutoForestFrom = 0.2;

  /// Keeps a reference to `features`, which must outlive the model.
  FeasibilityModel(const ConfigFeatures& features, std::vector<std::size_t> ran,
                   std::vector<std::size_t> failed, double forest_from = kNoForest);

  /// log of the chance that `candidate` runs, in (-inf, 0].
  double log_runs(std::size_t candidate) const;

 private:
  double vote(const std::vector<std::size_t>& group, std::size_t candidate) const;

  const ConfigFeatures& features_;
  std::vector<std::size_t> ran_;
  std::vector<std::size_t> failed_;
  std::vector<double> kernel_;  ///< the kernel by squared distance (an integer: levels and mismatches)
  RegressionForest forest_;  ///< ran (1) against failed (0); empty unless asked for and both seen
};

}  // namespace disttune::detail
