// A small randomised regression forest over config features: bootstrap samples, random splits.
#include "strategies/regression_forest.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

namespace disttune::detail {
namespace {

/// splitmix64: a small generator whose output is the same on every platform (ranks agree).
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// The categorical dimensions a tree can split: at most 64 categories (one bit set).
constexpr int kMostCategories = 64;

}  // namespace

RegressionForest::RegressionForest(const ConfigFeatures& features,
                                   std::vector<std::size_t> candidates, std::vector<double> targets,
                                   std::uint64_t seed)
    : features_(features), candidates_(std::move(candidates)), targets_(std::move(targets)) {
  const std::size_t n = candidates_.size();
  if (n == 0) return;
  std::uint64_t state = seed ^ (0x2545f4914f6cdd1dULL * (n + 1));
  for (std::size_t t = 0; t < kTrees; ++t) {
    std::vector<std::size_t> sample(n);
    for (std::size_t& i : sample) i = static_cast<std::size_t>(next_random(state) % n);
    grow(trees_.emplace_back(), std::move(sample), state);
  }
}

bool RegressionForest::goes_left(const Node& split, std::size_t candidate) const {
  const auto numeric = static_cast<int>(features_.numeric_names.size());
  if (split.dimension < numeric)
    return features_.level[candidate][static_cast<std::size_t>(split.dimension)] <= split.threshold;
  const int category =
      features_.categorical[candidate][static_cast<std::size_t>(split.dimension - numeric)];
  return ((split.left_categories >> category) & 1ULL) != 0;
}

std::size_t RegressionForest::grow(std::vector<Node>& tree, std::vector<std::size_t> samples,
                                   std::uint64_t& state) {
  const std::size_t at = tree.size();
  tree.emplace_back();
  double mean = 0.0;
  for (std::size_t i : samples) mean += targets_[i];
  mean /= static_cast<double>(samples.size());
  double squares = 0.0;
  for (std::size_t i : samples) squares += (targets_[i] - mean) * (targets_[i] - mean);
  tree[at].mean = mean;
  tree[at].variance = squares / static_cast<double>(samples.size());
  if (samples.size() < kLeastToSplit) return at;

  // The dimensions that vary among the samples: numeric ones with their lowest and highest
  // level, categorical ones with the categories present.
  const std::size_t numeric = features_.numeric_names.size();
  std::vector<int> varying;
  std::vector<int> lowest(numeric, std::numeric_limits<int>::max());
  std::vector<int> highest(numeric, std::numeric_limits<int>::min());
  std::vector<std::uint64_t> present(features_.categorical_names.size(), 0);
  for (std::size_t i : samples) {
    const std::size_t c = candidates_[i];
    for (std::size_t d = 0; d < numeric; ++d) {
      lowest[d] = std::min(lowest[d], features_.level[c][d]);
      highest[d] = std::max(highest[d], features_.level[c][d]);
    }
    for (std::size_t d = 0; d < present.size(); ++d) {
      if (features_.category_counts[d] <= kMostCategories)
        present[d] |= 1ULL << features_.categorical[c][d];
    }
  }
  for (std::size_t d = 0; d < numeric; ++d) {
    if (lowest[d] < highest[d]) varying.push_back(static_cast<int>(d));
  }
  for (std::size_t d = 0; d < present.size(); ++d) {
    if ((present[d] & (present[d] - 1)) != 0) varying.push_back(static_cast<int>(numeric + d));
  }
  if (varying.empty()) return at;

  std::optional<Node> best;
  double best_error = std::numeric_limits<double>::infinity();
  for (std::size_t attempt = 0; attempt < kSplitTries; ++attempt) {
    Node split;
    split.dimension = varying[next_random(state) % varying.size()];
    const auto d = static_cast<std::size_t>(split.dimension);
    if (d < numeric) {
      split.threshold =
          lowest[d] +
          static_cast<int>(next_random(state) % static_cast<std::uint64_t>(highest[d] - lowest[d]));
    } else {
      const std::uint64_t categories = present[d - numeric];
      do split.left_categories = categories & next_random(state);
      while (split.left_categories == 0 || split.left_categories == categories);
    }
    double sums[2] = {0.0, 0.0};
    double squared[2] = {0.0, 0.0};
    double counts[2] = {0.0, 0.0};
    for (std::size_t i : samples) {
      const int side = goes_left(split, candidates_[i]) ? 0 : 1;
      sums[side] += targets_[i];
      squared[side] += targets_[i] * targets_[i];
      counts[side] += 1.0;
    }
    const double error =
        squared[0] - sums[0] * sums[0] / counts[0] + squared[1] - sums[1] * sums[1] / counts[1];
    if (error < best_error) best_error = error, best = split;
  }
  std::vector<std::size_t> left;
  std::vector<std::size_t> right;
  for (std::size_t i : samples) (goes_left(*best, candidates_[i]) ? left : right).push_back(i);
  tree[at].dimension = best->dimension;
  tree[at].threshold = best->threshold;
  tree[at].left_categories = best->left_categories;
  const std::size_t left_at = grow(tree, std::move(left), state);
  const std::size_t right_at = grow(tree, std::move(right), state);
  tree[at].left = left_at;
  tree[at].right = right_at;
  return at;
}

RegressionForest::Prediction RegressionForest::predict(std::size_t candidate) const {
  double sum = 0.0;
  double squares = 0.0;
  double within = 0.0;
  for (const std::vector<Node>& tree : trees_) {
    std::size_t at = 0;
    while (tree[at].dimension >= 0) {
      const Node& node = tree[at];
      at = goes_left(node, candidate) ? node.left : node.right;
    }
    sum += tree[at].mean;
    squares += tree[at].mean * tree[at].mean;
    within += tree[at].variance;
  }
  const auto trees = static_cast<double>(trees_.size());
  const double mean = sum / trees;
  return {mean, std::max(0.0, squares / trees - mean * mean) + within / trees};
}

}  // namespace disttune::detail
