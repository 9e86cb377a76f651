// Config features: each candidate's canonical JSON flattened into numbers and categories a search
// can compare.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace disttune::detail {

/// The candidates of one space as points. A leaf path of the candidates' JSON (e.g.
/// cfg.$triton.Config.kwargs.BLOCK_M) that holds a number in every candidate is a numeric
/// dimension, measured in levels: the rank of the value among the space's distinct values
/// of it (so 32, 64, 128 are levels 0, 1, 2, like log2 of powers of two). Any other leaf path
/// (strings, bools, nulls, numbers in some candidates only, a path some candidates lack) is a
/// categorical dimension. Paths with one value in the whole space are left out. A candidate that is
/// not JSON is one category.
struct ConfigFeatures {
  std::vector<std::string> numeric_names;
  std::vector<std::string> categorical_names;
  std::vector<std::vector<int>>
      level;  ///< [candidate][numeric dimension]: rank of its value among the space's values
  std::vector<std::vector<int>> categorical;  ///< [candidate][dimension]: category id
  std::vector<int> level_counts;     ///< [numeric dimension]: its distinct values in the space
  std::vector<int> category_counts;  ///< [categorical dimension]: its categories in the space

  std::size_t size() const { return level.size(); }
  /// Euclidean over the numeric levels, a categorical mismatch counting as one level:
  /// sqrt(squared_level_gap(a, b) + mismatches(a, b)).
  double distance(std::size_t a, std::size_t b) const;
  /// The sum over numeric dimensions of the squared gap in levels between a and b.
  int squared_level_gap(std::size_t a, std::size_t b) const;
  /// The categorical dimensions in which a and b differ.
  int mismatches(std::size_t a, std::size_t b) const;
  /// The largest squared_level_gap() of two candidates of the space can have.
  int widest_squared_level_gap() const;
  /// Whether a and b differ in exactly one dimension, by one level if it is numeric.
  bool neighbours(std::size_t a, std::size_t b) const;
  /// The one dimension in which a and b differ (numeric dimensions first, then categorical
  /// ones after them: numeric_names.size() + d), or -1 if they differ in none or in several.
  int only_difference(std::size_t a, std::size_t b) const;
  /// numeric_names.size() + categorical_names.size().
  std::size_t dimensions() const { return numeric_names.size() + categorical_names.size(); }
};

/// The features of `candidates` (canonical JSON texts).
ConfigFeatures config_features(const std::vector<std::string>& candidates);

}  // namespace disttune::detail
