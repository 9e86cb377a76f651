// Config features: each candidate's canonical JSON flattened into numbers and categories a search can compare.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace disttune::detail {

/// The candidates of one space as points. A leaf path of the candidates' JSON (e.g.
/// cfg.$triton.Config.kwargs.BLOCK_M) that holds a number in every candidate is a numeric
/// dimension: log2 of the value when every value is a positive power of two, scaled to
/// [0, 1] over the space. Any other leaf path (strings, bools, nulls, numbers in some
/// candidates only, a path some candidates lack) is a categorical dimension. Paths with one
/// value in the whole space are left out. A candidate that is not JSON is one category.
struct ConfigFeatures {
  std::vector<std::string> numeric_names;
  std::vector<std::string> categorical_names;
  std::vector<std::vector<double>> numeric;   ///< [candidate][dimension], in [0, 1]
  std::vector<std::vector<int>> level;        ///< [candidate][numeric dimension]: rank of its value among the space's values
  std::vector<std::vector<int>> categorical;  ///< [candidate][dimension]: category id

  std::size_t size() const { return numeric.size(); }
  /// Euclidean over the numeric dimensions, a categorical mismatch counting as a full range.
  double distance(std::size_t a, std::size_t b) const;
  /// Steps from a to b: the numeric levels apart, plus one per differing category.
  int steps(std::size_t a, std::size_t b) const;
};

/// The features of `candidates` (canonical JSON texts).
ConfigFeatures config_features(const std::vector<std::string>& candidates);

}  // namespace disttune::detail
