// The search's surrogate: nearest measured neighbours estimate time, uncertainty and chance to run.
#include "strategies/search_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace disttune::detail {
namespace {

/// Added to squared distances so that weights stay finite.
constexpr double kDistanceFloor = 1e-6;
/// The smallest uncertainty (log time), so that the score never divides by zero.
constexpr double kLeastUncertainty = 1e-4;

double weight(double distance) { return 1.0 / (distance * distance + kDistanceFloor); }

double normal_density(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi); }
double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

}  // namespace

SearchModel::SearchModel(const ConfigFeatures& features, std::vector<Observation> observed)
    : features_(features), observed_(std::move(observed)), is_observed_(features.size(), false) {
  double sum = 0.0;
  std::size_t runs = 0;
  best_log_time_ = std::numeric_limits<double>::infinity();
  for (const Observation& o : observed_) {
    is_observed_.at(o.candidate) = true;
    const double value = o.failed ? 0.0 : std::log(std::max(o.time_ms, 1e-9));
    log_time_.push_back(value);
    if (o.failed) continue;
    any_ran_ = true;
    sum += value;
    ++runs;
    best_log_time_ = std::min(best_log_time_, value);
  }
  if (runs == 0) return;
  const double mean = sum / static_cast<double>(runs);
  double squares = 0.0;
  double gaps = 0.0;
  for (std::size_t i = 0; i < observed_.size(); ++i) {
    if (observed_[i].failed) continue;
    squares += (log_time_[i] - mean) * (log_time_[i] - mean);
    double closest = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < observed_.size(); ++j) {
      if (j != i) closest = std::min(closest, features_.distance(observed_[i].candidate, observed_[j].candidate));
    }
    gaps += std::isfinite(closest) ? closest : 1.0;
  }
  spread_ = std::sqrt(squares / static_cast<double>(runs));
  length_ = std::max(gaps / static_cast<double>(runs), 1e-3);
}

std::vector<SearchModel::Neighbour> SearchModel::nearest(std::size_t candidate, bool ran_only,
                                                         std::size_t count) const {
  std::vector<Neighbour> all;
  for (std::size_t i = 0; i < observed_.size(); ++i) {
    if (ran_only && observed_[i].failed) continue;
    all.push_back({features_.distance(candidate, observed_[i].candidate), i});
  }
  const auto closer = [](const Neighbour& a, const Neighbour& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.observation < b.observation;
  };
  const std::size_t kept = std::min(count, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kept), all.end(), closer);
  all.resize(kept);
  return all;
}

double SearchModel::feasibility(std::size_t candidate) const {
  double runs = 0.5;  // a weak prior of one half-run, half-failure
  double total = 1.0;
  for (const Neighbour& n : nearest(candidate, false, kFeasibilityNeighbours)) {
    const double w = weight(n.distance);
    total += w;
    if (!observed_[n.observation].failed) runs += w;
  }
  return runs / total;
}

double SearchModel::score(std::size_t candidate) const {
  if (is_observed_.at(candidate)) return 0.0;
  const double chance = feasibility(candidate);
  if (!any_ran_) return chance;
  const std::vector<Neighbour> near = nearest(candidate, true, kTimeNeighbours);
  double total = 0.0;
  double mean = 0.0;
  for (const Neighbour& n : near) {
    total += weight(n.distance);
    mean += weight(n.distance) * log_time_[n.observation];
  }
  mean /= total;
  double local = 0.0;
  for (const Neighbour& n : near) {
    local += weight(n.distance) * (log_time_[n.observation] - mean) * (log_time_[n.observation] - mean);
  }
  local /= total;
  const double remote = spread_ * std::min(1.0, near.front().distance / length_);
  const double sigma = std::max(std::sqrt(local + remote * remote), kLeastUncertainty);
  const double z = (best_log_time_ - mean) / sigma;
  const double improvement = (best_log_time_ - mean) * normal_cdf(z) + sigma * normal_density(z);
  return std::max(improvement, 0.0) * chance;
}

}  // namespace disttune::detail
