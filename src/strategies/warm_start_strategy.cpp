// The warm-start strategy: probe the prior's best candidates and a sample of the others, climb from the fastest through its neighbours in the config space, then race the few.
#include <algorithm>
#include <vector>

#include "disttune/strategy.hpp"
#include "strategies/config_features.hpp"
#include "strategies/noise_interval.hpp"

namespace disttune {
namespace {

using detail::TimeEstimate;

TimeEstimate overall(const CandidateStanding& s) { return {s.time_ms, s.noise, s.samples}; }

/// Untimed runs of each probed candidate before its samples (its first launch loads it).
constexpr int kProbeWarmups = 1;

/// Phases: probe (the prior's top and a sample of the others), climb (rounds over the
/// unmeasured neighbours of the fastest so far, while a round finds a faster one), then few
/// (a fresh configured strategy racing the fastest measured, its indices mapped onto the
/// space). Without a prior, or over a small space: the configured strategy alone (full).
/// Ahead of the probe it names the probe and guesses at the first climb round
/// (probe_and_guesses); ahead of a climb round or the race, nothing.
class WarmStartStrategy final : public Strategy {
 public:
  explicit WarmStartStrategy(const Measurement& measurement)
      : measurement_(measurement), inner_(make_strategy(measurement)) {}

  void begin(const SpaceInfo& space) override {
    space_ = space;
    inner_->begin(space);
    const std::size_t count = space.candidates.size();
    std::vector<bool> seen(count, false);
    for (std::size_t i : space.prior) {
      if (i < count && !seen[i] && top_.size() < kWarmStartTop) top_.push_back(i), seen[i] = true;
    }
    if (top_.empty() || count <= kWarmStartTop + kWarmStartSample) {
      top_.clear();
      return;
    }
    features_ = detail::config_features(space.candidates);
    measured_.assign(count, false);
    // A deterministic sample of the others, spread evenly over the space from an offset
    // given by the seed (the same on every rank).
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < count; ++i) {
      if (!seen[i]) others.push_back(i);
    }
    const std::size_t offset = static_cast<std::size_t>(space.seed % others.size());
    std::vector<std::size_t> probe = top_;
    for (std::size_t c = 0; c < count; ++c) {
      if (features_.neighbours(c, top_.front())) probe.push_back(c);
    }
    for (std::size_t j = 0; j < kWarmStartSample; ++j) {
      probe.push_back(others[(offset + j * others.size() / kWarmStartSample) % others.size()]);
    }
    probe_ = ascending(std::move(probe));
    probe_ahead_ = probe_and_guesses();
  }

  std::vector<std::size_t> ahead() const override {
    if (phase_ == Phase::probe) return probe_ahead_;
    if (phase_ == Phase::full) return inner_->ahead();
    return {};  // a climb's next round depends on this one's times; the race is measured
  }

  Round first_round(std::size_t count) override {
    if (probe_.empty()) {
      phase_ = Phase::full;
      return inner_->first_round(count);
    }
    return measure(probe_);
  }

  Round next_round(const std::vector<CandidateStanding>& standings) override {
    if (phase_ == Phase::full) return inner_->next_round(standings);
    if (phase_ == Phase::few) return mapped(few_->next_round(subset_standings(standings)));
    const std::vector<std::size_t> fastest = fastest_measured(standings);
    if (fastest.empty()) {  // everything probed failed: the full space
      phase_ = Phase::full;
      return inner_->first_round(standings.size());
    }
    phase_ = Phase::climb;
    // Climb while the last round found a faster one than the centre it climbed from.
    if (climbs_ < kWarmStartClimbs && (climbs_ == 0 || fastest.front() != centre_)) {
      centre_ = fastest.front();
      std::vector<std::size_t> step;
      for (std::size_t k = 0; k < std::min(kWarmStartCentres, fastest.size()); ++k) {
        for (std::size_t c = 0; c < measured_.size(); ++c) {
          if (!measured_[c] && features_.neighbours(c, fastest[k])) step.push_back(c);
        }
      }
      ++climbs_;
      if (!step.empty()) return measure(ascending(std::move(step)));
    }
    // The race: the fastest measured, those not clearly slower than the fastest first.
    for (std::size_t i : fastest) {
      const bool close = !detail::clearly_faster(overall(standings[fastest.front()]), overall(standings[i]),
                                                 detail::kTieWidth);
      if (subset_.size() < kWarmStartRace && (close || subset_.size() < 2)) subset_.push_back(i);
    }
    subset_ = ascending(std::move(subset_));
    phase_ = Phase::few;
    few_ = make_strategy(measurement_);
    SpaceInfo few_space;
    few_space.seed = space_.seed;
    few_space.compile_threads = space_.compile_threads;
    for (std::size_t i : subset_) few_space.candidates.push_back(space_.candidates.at(i));
    few_->begin(few_space);
    return mapped(few_->first_round(subset_.size()));
  }

 private:
  enum class Phase { probe, climb, few, full };

  static std::vector<std::size_t> ascending(std::vector<std::size_t> list) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    return list;
  }

  /// The probe, then what the first climb round likely measures, on the compile threads the
  /// probe leaves idle: the unmeasured neighbours of the prior's 2nd and 3rd candidates (the
  /// climb takes those of the kWarmStartCentres fastest probed, often the prior's first ones;
  /// the first's are probed), at most the front end's compile threads in all
  /// (SpaceInfo::compile_threads): no guess waits for a thread, so
  /// each compiles beside the probe's own compiles and ends about when they do.
  std::vector<std::size_t> probe_and_guesses() const {
    std::vector<std::size_t> named = probe_;
    std::vector<bool> listed(space_.candidates.size(), false);
    for (std::size_t i : probe_) listed[i] = true;
    for (std::size_t k = 1; k < std::min(top_.size(), kWarmStartCentres); ++k) {
      for (std::size_t c = 0; c < listed.size() && named.size() < space_.compile_threads; ++c) {
        if (!listed[c] && features_.neighbours(c, top_[k])) named.push_back(c), listed[c] = true;
      }
    }
    return named;
  }

  /// A probe or climb round over `list`, marking it measured.
  Round measure(const std::vector<std::size_t>& list) {
    for (std::size_t i : list) measured_[i] = true;
    return Round{list, kProbeWarmups, kWarmStartProbeRuns};
  }

  /// The measured candidates that did not fail, fastest first (ties by index).
  std::vector<std::size_t> fastest_measured(const std::vector<CandidateStanding>& standings) const {
    std::vector<std::size_t> list;
    for (std::size_t i = 0; i < measured_.size(); ++i) {
      if (measured_[i] && !standings[i].failed) list.push_back(i);
    }
    std::stable_sort(list.begin(), list.end(),
                     [&](std::size_t a, std::size_t b) { return standings[a].time_ms < standings[b].time_ms; });
    return list;
  }

  std::vector<CandidateStanding> subset_standings(const std::vector<CandidateStanding>& standings) const {
    std::vector<CandidateStanding> part;
    part.reserve(subset_.size());
    for (std::size_t i : subset_) part.push_back(standings[i]);
    return part;
  }

  /// A round of the few's strategy in the space's indices (subset_ is ascending, so order is kept).
  Round mapped(Round round) const {
    for (std::size_t& i : round.candidates) i = subset_.at(i);
    if (round.chosen) round.chosen = subset_.at(*round.chosen);
    for (std::size_t& i : round.within_noise) i = subset_.at(i);
    return round;
  }

  Measurement measurement_;
  std::unique_ptr<Strategy> inner_;  ///< the configured strategy over the whole space
  std::unique_ptr<Strategy> few_;    ///< the configured strategy over subset_
  SpaceInfo space_;
  detail::ConfigFeatures features_;
  std::vector<std::size_t> top_;     ///< the prior's first candidates, best first
  std::vector<std::size_t> probe_;   ///< top_ and the sampled others, ascending
  std::vector<std::size_t> probe_ahead_;  ///< probe_, then the guesses at the first climb round
  std::vector<bool> measured_;       ///< per candidate: in a probe or climb round
  std::size_t centre_ = 0;           ///< the fastest when the last climb round was named
  std::size_t climbs_ = 0;
  std::vector<std::size_t> subset_;  ///< the few that race, ascending
  Phase phase_ = Phase::probe;
};

}  // namespace

std::unique_ptr<Strategy> make_warm_start_strategy(const Measurement& measurement) {
  return std::make_unique<WarmStartStrategy>(measurement);
}

}  // namespace disttune
