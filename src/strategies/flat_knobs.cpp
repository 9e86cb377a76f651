// Flat knobs: the dimensions along which measured pairs of configs run alike.
#include "strategies/flat_knobs.hpp"

#include <cmath>
#include <cstddef>

namespace disttune::detail {

std::vector<bool> flat_knobs(const ConfigFeatures& features,
                             const std::vector<Observation>& observed, double bound) {
  std::vector<bool> flat(features.dimensions(), false);
  if (bound <= 0.0) return flat;
  std::vector<double> gaps(flat.size(), 0.0);
  std::vector<int> pairs(flat.size(), 0);
  for (std::size_t i = 0; i < observed.size(); ++i) {
    if (observed[i].failed) continue;
    for (std::size_t j = i + 1; j < observed.size(); ++j) {
      if (observed[j].failed) continue;
      const int d = features.only_difference(observed[i].candidate, observed[j].candidate);
      if (d < 0) continue;
      gaps[static_cast<std::size_t>(d)] +=
          std::abs(std::log(observed[i].time_ms / observed[j].time_ms));
      ++pairs[static_cast<std::size_t>(d)];
    }
  }
  for (std::size_t d = 0; d < flat.size(); ++d)
    flat[d] = pairs[d] >= kLeastPairs && gaps[d] / pairs[d] < bound;
  return flat;
}

bool flat_twins(const ConfigFeatures& features, std::size_t a, std::size_t b,
                const std::vector<bool>& flat) {
  const std::size_t numeric = features.numeric_names.size();
  for (std::size_t d = 0; d < numeric; ++d) {
    if (features.level[a][d] != features.level[b][d] && !flat[d]) return false;
  }
  for (std::size_t d = 0; d < features.categorical_names.size(); ++d) {
    if (features.categorical[a][d] != features.categorical[b][d] && !flat[numeric + d])
      return false;
  }
  return true;
}

}  // namespace disttune::detail
