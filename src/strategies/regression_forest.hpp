// A small randomised regression forest over config features (extra-trees on bootstrap samples):
// the search's forest estimate of which configs run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strategies/config_features.hpp"

namespace disttune::detail {

/// An ensemble of randomised regression trees (extra-trees, Geurts et al. 2006, each on a
/// bootstrap sample, as SMAC's random forest; Hutter et al. 2011) of `targets` over the
/// features of `candidates`. A node splits a numeric dimension at a level, a categorical one
/// into two sets of its categories (so a category is never put on a scale), taking the best
/// by squared error of kSplitTries random splits; a node of fewer than kLeastToSplit samples is
/// a leaf. Every choice is a function of `seed` and the inputs, so ranks agree.
class RegressionForest {
 public:
  static constexpr std::size_t kTrees = 32;
  static constexpr std::size_t kSplitTries = 8;
  static constexpr std::size_t kLeastToSplit = 4;

  /// Keeps a reference to `features`, which must outlive the forest. No trees without
  /// candidates.
  RegressionForest(const ConfigFeatures& features, std::vector<std::size_t> candidates,
                   std::vector<double> targets, std::uint64_t seed);

  /// The trees' mean at `candidate`, and its variance: the trees' spread plus the mean spread
  /// within the leaves it falls in (the law of total variance).
  struct Prediction {
    double mean = 0.0;
    double variance = 0.0;
  };
  Prediction predict(std::size_t candidate) const;

  bool empty() const { return trees_.empty(); }

 private:
  /// A node: a leaf (dimension < 0) holds its samples' mean and variance; else a numeric
  /// dimension d goes left at level <= threshold, a categorical one (d - numeric dimensions)
  /// for the categories in the bit set `left_categories`.
  struct Node {
    int dimension = -1;
    int threshold = 0;
    std::uint64_t left_categories = 0;
    std::size_t left = 0;
    std::size_t right = 0;
    double mean = 0.0;
    double variance = 0.0;
  };

  std::size_t grow(std::vector<Node>& tree, std::vector<std::size_t> samples, std::uint64_t& state);
  bool goes_left(const Node& split, std::size_t candidate) const;

  const ConfigFeatures& features_;
  std::vector<std::size_t> candidates_;
  std::vector<double> targets_;
  std::vector<std::vector<Node>> trees_;
};

}  // namespace disttune::detail
