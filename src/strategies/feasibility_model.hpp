// The search's feasibility model: how likely an unmeasured config is to run, from the measured
// configs near it.
#pragma once

#include <cstddef>
#include <vector>

#include "strategies/config_features.hpp"

namespace disttune::detail {

/// Whether a config runs at all (out of resources, compile errors...) depends on joint
/// limits such as block sizes times stages against shared memory, so it is judged from the
/// measured configs near a candidate in all dimensions at once, not per dimension: a Parzen
/// vote (Gaussian kernel over the distance in levels) of those that ran against those that
/// failed, with a flat prior of half a vote each. Kept apart from the speed model so that
/// failures lower the score of their neighbourhood only, not of every config sharing one of
/// their parameter values (a fast config often sits next to the configs that do not fit).
class FeasibilityModel {
 public:
  /// Keeps a reference to `features`, which must outlive the model.
  FeasibilityModel(const ConfigFeatures& features, std::vector<std::size_t> ran,
                   std::vector<std::size_t> failed);

  /// log of the chance that `candidate` runs, in (-inf, 0].
  double log_runs(std::size_t candidate) const;

 private:
  double vote(const std::vector<std::size_t>& group, std::size_t candidate) const;

  const ConfigFeatures& features_;
  std::vector<std::size_t> ran_;
  std::vector<std::size_t> failed_;
  std::vector<double> kernel_;  ///< the kernel by squared distance (an integer: levels and mismatches)
};

}  // namespace disttune::detail
