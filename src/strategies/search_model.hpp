// The search's model: a tree-structured Parzen estimator over config features, with a separate
// feasibility model for failures.
#pragma once

#include <cstddef>
#include <vector>

#include "strategies/config_features.hpp"
#include "strategies/feasibility_model.hpp"

namespace disttune::detail {

/// One measured candidate as the search saw it (agreed numbers).
struct Observation {
  std::size_t candidate = 0;
  bool failed = false;   ///< compile error, out of resources, timeout, wrong result...
  double time_ms = 0.0;  ///< agreed time; meaningless when failed
};

/// The candidates of `observed` that failed (`failed`) or ran (`!failed`), in their order.
std::vector<std::size_t> candidates_of(const std::vector<Observation>& observed, bool failed);

/// A tree-structured Parzen estimator (Bergstra et al., 2011) for speed, times a feasibility
/// model for failures. Of the candidates that ran, the fastest kGoodShare (at least
/// kLeastGood) are "good", the rest "slow". Each group's density at a candidate is estimated
/// twice: factored (a product over dimensions of smoothed per-dimension Parzen estimates: a
/// Gaussian kernel over numeric levels, matching counts over categories, each with a flat
/// prior) and joint (one Parzen estimate over all dimensions at once, which sees interactions
/// such as "BLOCK_K 128 is fast with SPLIT_K 1 only"). The score is the log of good over slow
/// density, kJointWeight of it joint and the rest factored, plus the log chance that the
/// candidate runs (FeasibilityModel): high where configs look like the fast ones, unlike the
/// slow ones, and away from configs that failed.
class SearchModel {
 public:
  static constexpr double kGoodShare = 0.25;
  static constexpr std::size_t kLeastGood = 3;
  static constexpr double kJointWeight = 0.6;

  /// Keeps a reference to `features`, which must outlive the model. `forest_from`: the chance
  /// to run also from a forest from this share of failures on (FeasibilityModel's).
  SearchModel(const ConfigFeatures& features, const std::vector<Observation>& observed,
              double forest_from = FeasibilityModel::kNoForest);

  /// log(good density / slow density) + log(chance to run) at `candidate`: higher is more
  /// promising. Its cost is one pass over the measured candidates; the factored estimate is
  /// a table lookup per dimension (made once per model, per level and category).
  double log_score(std::size_t candidate) const;

 private:
  /// A group's factored log density per dimension: [dimension][level or category id].
  struct FactoredTable {
    std::vector<std::vector<double>> numeric;
    std::vector<std::vector<double>> categorical;
  };
  FactoredTable factored_table(const std::vector<std::size_t>& group) const;
  double log_factored_density(const FactoredTable& table, std::size_t candidate) const;
  double log_joint_density(const std::vector<std::size_t>& group, std::size_t candidate) const;

  const ConfigFeatures& features_;
  std::vector<std::size_t> good_;
  std::vector<std::size_t> slow_;
  FeasibilityModel feasibility_;
  FactoredTable good_factored_;
  FactoredTable slow_factored_;
  std::vector<double> joint_kernel_;  ///< the joint kernel by squared gap in levels
};

}  // namespace disttune::detail
