// The search's feasibility model: a Parzen vote of the measured neighbours that ran against
// those that failed.
#include "strategies/feasibility_model.hpp"

#include <cmath>
#include <utility>

namespace disttune::detail {
namespace {

/// Kernel width (squared, in levels): a config one level away weighs exp(-2) ~ 0.14.
constexpr double kWidthSquared = 0.5;
/// The flat prior: half a vote for running, half for failing.
constexpr double kPriorVote = 0.5;

}  // namespace

FeasibilityModel::FeasibilityModel(const ConfigFeatures& features, std::vector<std::size_t> ran,
                                   std::vector<std::size_t> failed)
    : features_(features), ran_(std::move(ran)), failed_(std::move(failed)) {
  const int widest = features_.widest_squared_level_gap() + static_cast<int>(features_.categorical_names.size());
  for (int squared = 0; squared <= widest; ++squared) {
    const double distance = std::sqrt(static_cast<double>(squared));
    kernel_.push_back(std::exp(-distance * distance / kWidthSquared));
  }
}

double FeasibilityModel::vote(const std::vector<std::size_t>& group,
                              std::size_t candidate) const {
  double sum = kPriorVote;
  for (std::size_t o : group) {
    sum += kernel_[static_cast<std::size_t>(features_.squared_level_gap(o, candidate) +
                                            features_.mismatches(o, candidate))];
  }
  return sum;
}

double FeasibilityModel::log_runs(std::size_t candidate) const {
  const double runs = vote(ran_, candidate);
  return std::log(runs / (runs + vote(failed_, candidate)));
}

}  // namespace disttune::detail
