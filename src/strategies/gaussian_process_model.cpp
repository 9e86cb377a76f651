// The search's Gaussian process model: log time regressed over config features, scored by expected
// improvement.
#include "strategies/gaussian_process_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace disttune::detail {
GaussianProcessModel::GaussianProcessModel(const ConfigFeatures& features,
                                           const std::vector<Observation>& observed,
                                           double forest_from)
    : features_(features),
      feasibility_(features, candidates_of(observed, false), candidates_of(observed, true),
                   forest_from),
      runs_(candidates_of(observed, false)) {
  const std::size_t n = runs_.size();
  if (n < 2) return;
  std::vector<double> log_times;
  for (const Observation& o : observed) {
    if (!o.failed) log_times.push_back(std::log(o.time_ms));
  }
  double mean = 0.0;
  for (double y : log_times) mean += y;
  mean /= static_cast<double>(n);
  double variance = 0.0;
  for (double y : log_times) variance += (y - mean) * (y - mean);
  const double spread = std::sqrt(variance / static_cast<double>(n)) + 1e-9;
  for (double& y : log_times) y = (y - mean) / spread;
  mean_log_ = mean;
  spread_log_ = spread;
  fastest_ = *std::min_element(log_times.begin(), log_times.end());
  double best_fit = -std::numeric_limits<double>::infinity();
  double best_length = length_;
  for (double length : kLengthsLevels) {
    set_length(length);
    const double fit = factorise(log_times);
    if (fit > best_fit) best_fit = fit, best_length = length;
  }
  set_length(best_length);
  factorise(log_times);
}

void GaussianProcessModel::set_length(double length) {
  length_ = length;
  kernel_by_gap_.clear();
  for (int squared = 0; squared <= features_.widest_squared_level_gap(); ++squared) {
    double k = std::exp(-0.5 * static_cast<double>(squared) / (length_ * length_));
    for (std::size_t m = 0; m <= features_.categorical_names.size(); ++m, k *= kCategoryMismatch)
      kernel_by_gap_.push_back(k);
  }
}

double GaussianProcessModel::kernel(std::size_t a, std::size_t b) const {
  const std::size_t squared = static_cast<std::size_t>(features_.squared_level_gap(a, b));
  const std::size_t mismatches = static_cast<std::size_t>(features_.mismatches(a, b));
  return kernel_by_gap_[squared * (features_.categorical_names.size() + 1) + mismatches];
}

double GaussianProcessModel::factorise(const std::vector<double>& log_times) {
  const std::size_t n = runs_.size();
  cholesky_.assign(n * n, 0.0);
  double log_determinant = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      double sum = kernel(runs_[i], runs_[j]) + (i == j ? kNoise : 0.0);
      for (std::size_t k = 0; k < j; ++k) sum -= cholesky_[i * n + k] * cholesky_[j * n + k];
      cholesky_[i * n + j] = i == j ? std::sqrt(std::max(sum, 1e-12)) : sum / cholesky_[j * n + j];
    }
    log_determinant += 2.0 * std::log(cholesky_[i * n + i]);
  }
  whitened_ = log_times;
  solve_lower(whitened_);
  double misfit = 0.0;
  for (double w : whitened_) misfit += w * w;
  return -0.5 * misfit - 0.5 * log_determinant;
}

void GaussianProcessModel::solve_lower(std::vector<double>& b) const {
  const std::size_t n = runs_.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) b[i] -= cholesky_[i * n + k] * b[k];
    b[i] /= cholesky_[i * n + i];
  }
}

double GaussianProcessModel::predicted_log_ms(std::size_t candidate) const {
  if (runs_.size() < 2) return mean_log_;
  std::vector<double> v(runs_.size());
  for (std::size_t i = 0; i < runs_.size(); ++i) v[i] = kernel(runs_[i], candidate);
  solve_lower(v);
  double mean = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) mean += v[i] * whitened_[i];
  return mean_log_ + spread_log_ * mean;
}

double GaussianProcessModel::log_score(std::size_t candidate) const {
  const double runs = feasibility_.log_runs(candidate);
  if (runs_.size() < 2) return runs;
  // mean = k^T K^-1 y = v^T w and variance = 1 - v^T v, with v = L^-1 k and w = L^-1 y.
  std::vector<double> v(runs_.size());
  for (std::size_t i = 0; i < runs_.size(); ++i) v[i] = kernel(runs_[i], candidate);
  solve_lower(v);
  double mean = 0.0;
  double explained = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    mean += v[i] * whitened_[i];
    explained += v[i] * v[i];
  }
  const double sigma = std::sqrt(std::max(1.0 - explained, 1e-12));
  const double z = (fastest_ - mean) / sigma;
  const double below = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  const double density = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
  return std::log(sigma * (z * below + density) + std::numeric_limits<double>::min()) + runs;
}

}  // namespace disttune::detail
