// The search's surrogate: k-nearest-neighbour estimates of time and of feasibility, scored by expected improvement.
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

/// A small documented method (docs/strategies.md), no learned parameters: the log time of
/// an unmeasured candidate is the inverse-square-distance weighted mean over its
/// kTimeNeighbours nearest measured candidates that ran; its uncertainty is their weighted
/// spread plus the space's spread scaled by how far the nearest of them is; its chance to
/// run is the weighted share of runs among its kFeasibilityNeighbours nearest measured
/// candidates, failures included. Its score is the expected improvement over the best log
/// time so far times that chance.
class SearchModel {
 public:
  static constexpr std::size_t kTimeNeighbours = 5;
  static constexpr std::size_t kFeasibilityNeighbours = 7;

  /// Keeps a reference to `features`, which must outlive the model.
  SearchModel(const ConfigFeatures& features, std::vector<Observation> observed);

  /// Expected improvement times the chance to run; 0 for a candidate already observed.
  double score(std::size_t candidate) const;
  /// The chance that `candidate` runs, in (0, 1).
  double feasibility(std::size_t candidate) const;

 private:
  struct Neighbour {
    double distance;
    std::size_t observation;
  };
  std::vector<Neighbour> nearest(std::size_t candidate, bool ran_only, std::size_t count) const;

  const ConfigFeatures& features_;
  std::vector<Observation> observed_;
  std::vector<bool> is_observed_;
  std::vector<double> log_time_;  ///< per observation; 0 for a failure
  double best_log_time_ = 0.0;
  double spread_ = 0.0;          ///< standard deviation of the log times that ran
  double length_ = 1.0;          ///< mean distance from a run to its nearest other observation
  bool any_ran_ = false;
};

}  // namespace disttune::detail
