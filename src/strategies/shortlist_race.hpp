// The converge strategy run on a shortlist of a larger space: its rounds and standings mapped both
// ways.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "disttune/strategy.hpp"

namespace disttune::detail {

/// The converge parameters a search takes and hands to its race (docs/strategies.md).
inline const std::vector<std::string> kRaceParameters{"max_noise", "min_time_ms"};

/// The settings converge races with: `measurement`'s, its options reduced to kRaceParameters.
Measurement race_settings(const Measurement& measurement);

/// Races `members` (ascending indices of the whole space) with the converge strategy, as if
/// they were the whole space: converge's rounds name members, its standings are theirs.
class ShortlistRace {
 public:
  /// race_settings(measurement) are converge's; InvalidSetting for a bad race parameter.
  ShortlistRace(const Measurement& measurement, std::vector<std::size_t> members);

  Round first_round();
  Round next_round(const std::vector<CandidateStanding>& standings);
  const std::vector<std::size_t>& members() const { return members_; }

 private:
  Round to_space(Round round) const;

  std::vector<std::size_t> members_;
  std::unique_ptr<Strategy> converge_;
};

}  // namespace disttune::detail
