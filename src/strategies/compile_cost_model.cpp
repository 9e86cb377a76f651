// The search's compile cost model: a Parzen regression of log compile time over config features.
#include "strategies/compile_cost_model.hpp"

#include <cmath>
#include <utility>

namespace disttune::detail {
namespace {

/// Kernel width (squared, in levels): a config one level away weighs exp(-1) ~ 0.37.
constexpr double kCompileWidthSquared = 1.0;
/// Pseudo-observations of the mean of every compile seen.
constexpr double kPriorWeight = 1.0;

}  // namespace

CompileCostModel::CompileCostModel(const ConfigFeatures& features, std::vector<CompileCost> seen)
    : features_(features), seen_(std::move(seen)) {
  if (seen_.empty()) return;
  for (const CompileCost& cost : seen_) mean_log_ += std::log(cost.seconds);
  mean_log_ /= static_cast<double>(seen_.size());
  for (const CompileCost& cost : seen_) {
    const double deviation = std::log(cost.seconds) - mean_log_;
    sd_log_ += deviation * deviation;
  }
  if (seen_.size() > 1) sd_log_ = std::sqrt(sd_log_ / static_cast<double>(seen_.size() - 1));
  const int widest = features_.widest_squared_level_gap() + static_cast<int>(features_.categorical_names.size());
  for (int squared = 0; squared <= widest; ++squared)
    kernel_.push_back(std::exp(-static_cast<double>(squared) / kCompileWidthSquared));
}

double CompileCostModel::seconds(std::size_t candidate) const {
  if (seen_.empty()) return 0.0;
  double weight = kPriorWeight;
  double sum = kPriorWeight * mean_log_;
  for (const CompileCost& cost : seen_) {
    const double w = kernel_[static_cast<std::size_t>(features_.squared_level_gap(cost.candidate, candidate) +
                                                      features_.mismatches(cost.candidate, candidate))];
    weight += w;
    sum += w * std::log(cost.seconds);
  }
  return std::exp(sum / weight);
}

double CompileCostModel::typical_seconds() const { return seen_.empty() ? 0.0 : std::exp(mean_log_); }

double CompileCostModel::spread() const { return std::exp(sd_log_); }

}  // namespace disttune::detail
