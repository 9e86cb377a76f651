// The search's feasibility model: a Parzen vote of the measured neighbours that ran against
// those that failed.
#include "strategies/feasibility_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace disttune::detail {
namespace {

/// Kernel width (squared, in levels): a config one level away weighs exp(-2) ~ 0.14.
constexpr double kWidthSquared = 0.5;
/// The flat prior: half a vote for running, half for failing.
constexpr double kPriorVote = 0.5;
/// The forest's seed: any constant (every rank grows the same trees from the same runs).
constexpr std::uint64_t kForestSeed = 0x5eed;

/// The forest's samples: the candidates that ran, then those that failed (none unless both
/// groups are there and at least `forest_from` of them failed) ...
std::vector<std::size_t> forest_candidates(double forest_from, const std::vector<std::size_t>& ran,
                                           const std::vector<std::size_t>& failed) {
  const auto measured = static_cast<double>(ran.size() + failed.size());
  if (ran.empty() || failed.empty() || static_cast<double>(failed.size()) < forest_from * measured)
    return {};
  std::vector<std::size_t> both = ran;
  both.insert(both.end(), failed.begin(), failed.end());
  return both;
}

/// ... and their targets: 1 ran, 0 failed.
std::vector<double> forest_targets(const std::vector<std::size_t>& ran,
                                   const std::vector<std::size_t>& failed) {
  std::vector<double> targets(ran.size(), 1.0);
  targets.resize(ran.size() + failed.size(), 0.0);
  return targets;
}

}  // namespace

FeasibilityModel::FeasibilityModel(const ConfigFeatures& features, std::vector<std::size_t> ran,
                                   std::vector<std::size_t> failed, double forest_from)
    : features_(features),
      ran_(std::move(ran)),
      failed_(std::move(failed)),
      forest_(features, forest_candidates(forest_from, ran_, failed_),
              forest_targets(ran_, failed_), kForestSeed) {
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
  const double near = runs / (runs + vote(failed_, candidate));
  if (forest_.empty()) return std::log(near);
  const double forest = std::max(kLeastForestChance, forest_.predict(candidate).mean);
  return std::log((1.0 - kForestShare) * near + kForestShare * forest);
}

}  // namespace disttune::detail
