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

}  // namespace

std::vector<std::size_t> candidates_of(const std::vector<Observation>& observed, bool failed) {
  std::vector<std::size_t> candidates;
  for (const Observation& o : observed) {
    if (o.failed == failed) candidates.push_back(o.candidate);
  }
  return candidates;
}

SearchModel::SearchModel(const ConfigFeatures& features, const std::vector<Observation>& observed,
                         double forest_from)
    : features_(features),
      feasibility_(features, candidates_of(observed, false), candidates_of(observed, true),
                   forest_from) {
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
  good_factored_ = factored_table(good_);
  slow_factored_ = factored_table(slow_);
  for (int squared = 0; squared <= features_.widest_squared_level_gap(); ++squared)
    joint_kernel_.push_back(std::exp(-static_cast<double>(squared) / kJointWidthSquared));
}

SearchModel::FactoredTable SearchModel::factored_table(const std::vector<std::size_t>& group) const {
  const double size = 1.0 + static_cast<double>(group.size());
  FactoredTable table;
  for (std::size_t d = 0; d < features_.numeric_names.size(); ++d) {
    std::vector<double>& by_level = table.numeric.emplace_back();
    for (int level = 0; level < features_.level_counts[d]; ++level) {
      double sum = kNumericPrior;
      for (std::size_t o : group) {
        const double gap = features_.level[o][d] - level;
        sum += std::exp(-gap * gap / kLevelWidthSquared);
      }
      by_level.push_back(std::log(sum / size));
    }
  }
  for (std::size_t d = 0; d < features_.categorical_names.size(); ++d) {
    std::vector<double>& by_category = table.categorical.emplace_back();
    for (int category = 0; category < features_.category_counts[d]; ++category) {
      double sum = kCategoricalPrior;
      for (std::size_t o : group) sum += features_.categorical[o][d] == category ? 1.0 : 0.0;
      by_category.push_back(std::log(sum / size));
    }
  }
  return table;
}

double SearchModel::log_factored_density(const FactoredTable& table, std::size_t candidate) const {
  double log_density = 0.0;
  for (std::size_t d = 0; d < table.numeric.size(); ++d)
    log_density += table.numeric[d][static_cast<std::size_t>(features_.level[candidate][d])];
  for (std::size_t d = 0; d < table.categorical.size(); ++d)
    log_density += table.categorical[d][static_cast<std::size_t>(features_.categorical[candidate][d])];
  return log_density;
}

double SearchModel::log_joint_density(const std::vector<std::size_t>& group,
                                      std::size_t candidate) const {
  double sum = kJointPrior;
  for (std::size_t o : group) {
    double kernel = joint_kernel_[static_cast<std::size_t>(features_.squared_level_gap(o, candidate))];
    for (int m = features_.mismatches(o, candidate); m > 0; --m) kernel *= kJointCategoryMismatch;
    sum += kernel;
  }
  return std::log(sum / (kJointPrior + static_cast<double>(group.size())));
}

double SearchModel::log_score(std::size_t candidate) const {
  const double factored =
      log_factored_density(good_factored_, candidate) - log_factored_density(slow_factored_, candidate);
  const double joint = log_joint_density(good_, candidate) - log_joint_density(slow_, candidate);
  return (1.0 - kJointWeight) * factored + kJointWeight * joint +
         feasibility_.log_runs(candidate);
}

}  // namespace disttune::detail
