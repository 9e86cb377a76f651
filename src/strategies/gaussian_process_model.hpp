// The search's other model (model=gp): a Gaussian process over log time, ranked by expected
// improvement.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "strategies/config_features.hpp"
#include "strategies/feasibility_model.hpp"
#include "strategies/search_model.hpp"

namespace disttune::detail {

/// A Gaussian process regression of log time over the config features: a squared-exponential
/// kernel over numeric levels times kCategoryMismatch per categorical dimension in which two
/// configs differ, over the measured log times standardised, with kNoise of noise. Its length
/// scale is the one of kLengthsLevels under which the measured times are most likely (the
/// marginal likelihood), so a table whose times change slowly with the levels gets a long one
/// without a constant chosen on any table. A candidate's score is the log of its expected
/// improvement over the fastest measured (Jones et al., 1998) plus the log chance that it runs
/// (FeasibilityModel, as SearchModel's). Unlike the Parzen estimator, which scores a candidate
/// by how much it looks like the fastest quarter, the process's uncertainty grows away from
/// what was measured, and its mean follows a trend across levels (BLOCK_K up, SPLIT_K down)
/// into regions no fast config was measured in.
class GaussianProcessModel {
 public:
  static constexpr std::array<double, 5> kLengthsLevels{1.0, 1.5, 2.0, 3.0, 4.0};
  static constexpr double kCategoryMismatch = 0.5;
  static constexpr double kNoise = 0.01;

  /// Keeps a reference to `features`, which must outlive the model. Its cost is one Cholesky
  /// factorisation of the runs' kernel matrix per length scale tried (cubic in the runs).
  /// `forest_from`: the chance to run also from a forest from this share of failures on
  /// (FeasibilityModel's).
  GaussianProcessModel(const ConfigFeatures& features, const std::vector<Observation>& observed,
                       double forest_from = FeasibilityModel::kNoForest);

  /// log(expected improvement) + log(chance to run) at `candidate`: higher is more promising.
  /// With fewer than two runs, the chance to run only. Its cost is quadratic in the runs.
  double log_score(std::size_t candidate) const;

  /// The predicted log of `candidate`'s time in ms (the process's mean).
  double predicted_log_ms(std::size_t candidate) const;

  /// The length scale chosen, in levels.
  double length_levels() const { return length_; }

 private:
  double kernel(std::size_t a, std::size_t b) const;
  /// Sets length_ and kernel_by_gap_ to it.
  void set_length(double length);
  /// Factorises the runs' kernel matrix at length_ into cholesky_ and whitens `log_times` into
  /// whitened_; returns their log marginal likelihood, less its constant.
  double factorise(const std::vector<double>& log_times);
  /// Solves L x = b in place, L the lower-triangular factor.
  void solve_lower(std::vector<double>& b) const;

  const ConfigFeatures& features_;
  FeasibilityModel feasibility_;
  std::vector<std::size_t> runs_;  ///< candidates that ran
  double length_ = kLengthsLevels.front();
  /// kernel() by squared level gap and mismatches, at length_: entry
  /// squared * (categorical dimensions + 1) + mismatches.
  std::vector<double> kernel_by_gap_;
  std::vector<double> cholesky_;  ///< L, row-major: L L^T = K + kNoise I
  std::vector<double> whitened_;  ///< L^-1 y, y the standardised log times
  double fastest_ = 0.0;          ///< the lowest standardised log time
  double mean_log_ = 0.0;         ///< the measured log times' mean and spread
  double spread_log_ = 1.0;
};

}  // namespace disttune::detail
