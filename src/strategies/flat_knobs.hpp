// The knobs of a space that the measured times show to make no difference: the search polishes
// along them last.
#pragma once

#include <cstddef>
#include <vector>

#include "strategies/config_features.hpp"
#include "strategies/search_model.hpp"

namespace disttune::detail {

/// Per dimension of `features` (ConfigFeatures::only_difference's numbering): whether it is
/// *flat*, i.e. at least kLeastPairs pairs of candidates that ran and differ in it alone were
/// measured, and their times differ by less than `bound` on average (the mean of
/// |log(time a / time b)|). A cache-eviction hint or a grouping order often is: where a
/// config's neighbours along such a knob run within noise of it, measuring them tells the
/// search nothing. `bound` 0: none is flat.
std::vector<bool> flat_knobs(const ConfigFeatures& features,
                             const std::vector<Observation>& observed, double bound);

/// Whether configs a and b differ only along knobs that `flat` (flat_knobs()) marks, or not at
/// all: "twins" as far as the measured times can tell.
bool flat_twins(const ConfigFeatures& features, std::size_t a, std::size_t b,
                const std::vector<bool>& flat);

/// The fewest measured pairs that make a knob flat.
inline constexpr int kLeastPairs = 2;

}  // namespace disttune::detail
