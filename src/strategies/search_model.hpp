// The search's model: a tree-structured Parzen estimator over config features, failures counted as
// bad outcomes.
#pragma once

#include <cstddef>
#include <vector>

#include "strategies/config_features.hpp"

namespace disttune::detail {

/// One measured candidate as the search saw it (agreed numbers).
struct Observation {
  std::size_t candidate = 0;
  bool failed = false;   ///< compile error, out of resources, timeout, wrong result...
  double time_ms = 0.0;  ///< agreed time; meaningless when failed
};

/// A tree-structured Parzen estimator (Bergstra et al., 2011), one factor per dimension:
/// the fastest kGoodShare of the candidates that ran (at least kLeastGood) are "good", the
/// rest and every failure "bad". Each group's density at a candidate is a product over
/// dimensions of a smoothed Parzen estimate: a Gaussian kernel over numeric levels, matching
/// counts over categories, each with a flat prior. The score is good density over bad
/// density: high where configs look like the fast ones and unlike the slow and failed ones
/// (so failures steer the search away, as a feasibility model would).
class SearchModel {
 public:
  static constexpr double kGoodShare = 0.25;
  static constexpr std::size_t kLeastGood = 3;

  /// Keeps a reference to `features`, which must outlive the model.
  SearchModel(const ConfigFeatures& features, const std::vector<Observation>& observed);

  /// log(good density / bad density) at `candidate`: higher is more promising.
  double log_score(std::size_t candidate) const;

 private:
  double log_density(const std::vector<std::size_t>& group, std::size_t candidate) const;

  const ConfigFeatures& features_;
  std::vector<std::size_t> good_;
  std::vector<std::size_t> bad_;
};

}  // namespace disttune::detail
