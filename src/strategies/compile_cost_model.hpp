// The search's compile cost model: how long an unprepared config will take to compile, from the
// compiles seen so far of the configs near it.
#pragma once

#include <cstddef>
#include <vector>

#include "strategies/config_features.hpp"

namespace disttune::detail {

/// One prepared candidate and the seconds its preparation took (> 0).
struct CompileCost {
  std::size_t candidate = 0;
  double seconds = 0.0;
};

/// A Parzen regression of log compile time over the config features: a candidate's predicted
/// time is the kernel-weighted geometric mean of the compiles seen near it in all dimensions
/// at once (block sizes times stages drive a compile's cost together), shrunk towards the
/// geometric mean of all of them by a prior of one pseudo-observation. Without any compile
/// seen, every prediction is 0 (nothing known).
class CompileCostModel {
 public:
  /// Keeps a reference to `features`, which must outlive the model.
  CompileCostModel(const ConfigFeatures& features, std::vector<CompileCost> seen);

  /// Predicted seconds to compile `candidate` (0 when no compile was seen).
  double seconds(std::size_t candidate) const;
  /// The geometric mean of the compiles seen (0 when none was seen).
  double typical_seconds() const;
  /// Their geometric standard deviation: exp of the standard deviation of their logs (1 when
  /// fewer than two were seen). 1.1: they take about as long as each other.
  double spread() const;

 private:
  const ConfigFeatures& features_;
  std::vector<CompileCost> seen_;
  double mean_log_ = 0.0;
  double sd_log_ = 0.0;
  std::vector<double> kernel_;  ///< the kernel by squared distance (levels and mismatches)
};

}  // namespace disttune::detail
