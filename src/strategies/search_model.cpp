// The search's model: Parzen densities of the good and the bad (slow or failed) candidates, per
// dimension.
#include "strategies/search_model.hpp"

#include <algorithm>
#include <cmath>

namespace disttune::detail {
namespace {

/// Kernel width over numeric levels: a neighbour one level away weighs exp(-2) ~ 0.14.
constexpr double kLevelWidthSquared = 0.5;
/// The flat prior of each factor, as a number of pseudo-observations: numeric ...
constexpr double kNumericPrior = 1.0;
/// ... and categorical (half an observation of each category).
constexpr double kCategoricalPrior = 0.5;

}  // namespace

SearchModel::SearchModel(const ConfigFeatures& features, const std::vector<Observation>& observed)
    : features_(features) {
  std::vector<const Observation*> runs;
  for (const Observation& o : observed) {
    if (o.failed) {
      bad_.push_back(o.candidate);
    } else {
      runs.push_back(&o);
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [](const Observation* a, const Observation* b) {
    return a->time_ms != b->time_ms ? a->time_ms < b->time_ms : a->candidate < b->candidate;
  });
  const auto good =
      std::max(kLeastGood, static_cast<std::size_t>(kGoodShare * static_cast<double>(runs.size())));
  for (std::size_t i = 0; i < runs.size(); ++i)
    (i < good ? good_ : bad_).push_back(runs[i]->candidate);
}

double SearchModel::log_density(const std::vector<std::size_t>& group,
                                std::size_t candidate) const {
  const double size = 1.0 + static_cast<double>(group.size());
  double log_density = 0.0;
  for (std::size_t d = 0; d < features_.numeric_names.size(); ++d) {
    double sum = kNumericPrior;
    for (std::size_t o : group) {
      const double gap = features_.level[o][d] - features_.level[candidate][d];
      sum += std::exp(-gap * gap / kLevelWidthSquared);
    }
    log_density += std::log(sum / size);
  }
  for (std::size_t d = 0; d < features_.categorical_names.size(); ++d) {
    double sum = kCategoricalPrior;
    for (std::size_t o : group)
      sum += features_.categorical[o][d] == features_.categorical[candidate][d] ? 1.0 : 0.0;
    log_density += std::log(sum / size);
  }
  return log_density;
}

double SearchModel::log_score(std::size_t candidate) const {
  return log_density(good_, candidate) - log_density(bad_, candidate);
}

}  // namespace disttune::detail
