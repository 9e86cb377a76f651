// The search's model: factored and joint Parzen densities of the good and the slow candidates,
// and the chance to run.
#include "strategies/search_model.hpp"

#include <algorithm>
#include <cmath>

namespace disttune::detail {
namespace {

/// Factored estimate: kernel width over numeric levels (a neighbour one level away weighs
/// exp(-2) ~ 0.14) ...
constexpr double kLevelWidthSquared = 0.5;
/// ... and the flat prior of each factor, as a number of pseudo-observations: numeric ...
constexpr double kNumericPrior = 1.0;
/// ... and categorical (half an observation of each category).
constexpr double kCategoricalPrior = 0.5;
/// Joint estimate: kernel width over the squared distance in levels (one level away in one
/// dimension weighs exp(-1) ~ 0.37), the weight of each categorical mismatch, and the flat
/// prior in pseudo-observations.
constexpr double kJointWidthSquared = 1.0;
constexpr double kJointCategoryMismatch = 0.3;
constexpr double kJointPrior = 0.05;

std::vector<std::size_t> ran_of(const std::vector<Observation>& observed, bool failed) {
  std::vector<std::size_t> candidates;
  for (const Observation& o : observed) {
    if (o.failed == failed) candidates.push_back(o.candidate);
  }
  return candidates;
}

}  // namespace

SearchModel::SearchModel(const ConfigFeatures& features, const std::vector<Observation>& observed)
    : features_(features),
      feasibility_(features, ran_of(observed, false), ran_of(observed, true)) {
  std::vector<const Observation*> runs;
  for (const Observation& o : observed) {
    if (!o.failed) runs.push_back(&o);
  }
  std::stable_sort(runs.begin(), runs.end(), [](const Observation* a, const Observation* b) {
    return a->time_ms != b->time_ms ? a->time_ms < b->time_ms : a->candidate < b->candidate;
  });
  const auto good =
      std::max(kLeastGood, static_cast<std::size_t>(kGoodShare * static_cast<double>(runs.size())));
  for (std::size_t i = 0; i < runs.size(); ++i)
    (i < good ? good_ : slow_).push_back(runs[i]->candidate);
}

double SearchModel::log_factored_density(const std::vector<std::size_t>& group,
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

double SearchModel::log_joint_density(const std::vector<std::size_t>& group,
                                      std::size_t candidate) const {
  double sum = kJointPrior;
  for (std::size_t o : group) {
    double squared = 0.0;
    for (std::size_t d = 0; d < features_.numeric_names.size(); ++d) {
      const double gap = features_.level[o][d] - features_.level[candidate][d];
      squared += gap * gap;
    }
    double kernel = std::exp(-squared / kJointWidthSquared);
    for (std::size_t d = 0; d < features_.categorical_names.size(); ++d) {
      if (features_.categorical[o][d] != features_.categorical[candidate][d])
        kernel *= kJointCategoryMismatch;
    }
    sum += kernel;
  }
  return std::log(sum / (kJointPrior + static_cast<double>(group.size())));
}

double SearchModel::log_score(std::size_t candidate) const {
  const double factored =
      log_factored_density(good_, candidate) - log_factored_density(slow_, candidate);
  const double joint = log_joint_density(good_, candidate) - log_joint_density(slow_, candidate);
  return (1.0 - kJointWeight) * factored + kJointWeight * joint +
         feasibility_.log_runs(candidate);
}

}  // namespace disttune::detail
