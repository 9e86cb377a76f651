// The converge strategy run on a shortlist: member indices mapped to and from the whole space.
#include "strategies/shortlist_race.hpp"

#include <optional>
#include <utility>

namespace disttune::detail {

Measurement race_settings(const Measurement& measurement) {
  Measurement settings = measurement;
  settings.strategy = "converge";
  settings.strategy_options.clear();
  for (const std::string& name : kRaceParameters) {
    const auto given = measurement.strategy_options.find(name);
    if (given != measurement.strategy_options.end()) settings.strategy_options.insert(*given);
  }
  return settings;
}

ShortlistRace::ShortlistRace(const Measurement& measurement, std::vector<std::size_t> members)
    : members_(std::move(members)), converge_(make_converge_strategy(race_settings(measurement))) {}

Round ShortlistRace::first_round() {
  return to_space(converge_->first_round(members_.size()));
}

Round ShortlistRace::next_round(const std::vector<CandidateStanding>& standings) {
  std::vector<CandidateStanding> theirs;
  theirs.reserve(members_.size());
  for (std::size_t member : members_) theirs.push_back(standings.at(member));
  return to_space(converge_->next_round(theirs));
}

Round ShortlistRace::to_space(Round round) const {
  for (std::size_t& c : round.candidates) c = members_.at(c);
  for (std::size_t& c : round.within_noise) c = members_.at(c);
  if (round.chosen) round.chosen = members_.at(*round.chosen);
  return round;
}

}  // namespace disttune::detail
