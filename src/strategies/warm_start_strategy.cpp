// The warm-start strategy: probe the prior's best candidates against a sample of the others, then race the few or fall back to the full space.
#include <algorithm>
#include <optional>
#include <vector>

#include "disttune/strategy.hpp"
#include "strategies/noise_interval.hpp"

namespace disttune {
namespace {

using detail::TimeEstimate;

TimeEstimate overall(const CandidateStanding& s) { return {s.time_ms, s.noise, s.samples}; }

/// Untimed runs of each probed candidate before its samples (its first launch loads it).
constexpr int kProbeWarmups = 1;

/// Phases: probe (the prior's top and a sample of the others), then either `few` (a fresh
/// configured strategy over the prior's top and the others within noise of them, its
/// indices mapped onto the space) or `full` (the configured strategy over every candidate).
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
    // A deterministic sample of the others, spread evenly over the space from an offset
    // given by the seed (the same on every rank).
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < count; ++i) {
      if (!seen[i]) others.push_back(i);
    }
    const std::size_t offset = static_cast<std::size_t>(space.seed % others.size());
    for (std::size_t j = 0; j < kWarmStartSample; ++j) {
      sample_.push_back(others[(offset + j * others.size() / kWarmStartSample) % others.size()]);
    }
    probe_ = top_;
    probe_.insert(probe_.end(), sample_.begin(), sample_.end());
    std::sort(probe_.begin(), probe_.end());
    probe_.erase(std::unique(probe_.begin(), probe_.end()), probe_.end());
  }

  std::vector<std::size_t> ahead() const override {
    if (phase_ == Phase::probe && !probe_.empty()) return probe_;
    if (phase_ == Phase::few) return {};
    return inner_->ahead();
  }

  Round first_round(std::size_t count) override {
    if (probe_.empty()) {
      phase_ = Phase::full;
      return inner_->first_round(count);
    }
    return Round{probe_, kProbeWarmups, kWarmStartProbeRuns};
  }

  Round next_round(const std::vector<CandidateStanding>& standings) override {
    if (phase_ == Phase::full) return inner_->next_round(standings);
    if (phase_ == Phase::few) return mapped(few_->next_round(subset_standings(standings)));
    // The probe's verdict: the prior's fastest against the fastest of the sample.
    std::optional<std::size_t> best_top;
    for (std::size_t i : top_) {
      if (!standings[i].failed && (!best_top || standings[i].time_ms < standings[*best_top].time_ms)) best_top = i;
    }
    bool beaten = !best_top;
    for (std::size_t i : sample_) {
      if (standings[i].failed || !best_top) continue;
      const bool by_margin = standings[i].time_ms < standings[*best_top].time_ms * (1.0 - kWarmStartMargin);
      beaten = beaten || (by_margin && detail::clearly_faster(overall(standings[i]), overall(standings[*best_top]),
                                                              detail::kTieWidth));
    }
    if (beaten) {
      phase_ = Phase::full;
      return inner_->first_round(standings.size());
    }
    // Confirmed: the prior's candidates and the sampled ones not clearly slower (a sampled
    // one faster by less than the margin among them) race.
    for (std::size_t i : probe_) {
      const bool in_top = std::find(top_.begin(), top_.end(), i) != top_.end();
      const bool close = !detail::clearly_faster(overall(standings[*best_top]), overall(standings[i]),
                                                 detail::kTieWidth);
      if (!standings[i].failed && (in_top || close)) subset_.push_back(i);
    }
    phase_ = Phase::few;
    few_ = make_strategy(measurement_);
    SpaceInfo few_space;
    few_space.seed = space_.seed;
    for (std::size_t i : subset_) few_space.candidates.push_back(space_.candidates.at(i));
    few_->begin(few_space);
    return mapped(few_->first_round(subset_.size()));
  }

 private:
  enum class Phase { probe, few, full };

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
  std::vector<std::size_t> top_;     ///< the prior's first candidates, best first
  std::vector<std::size_t> sample_;  ///< the sampled others
  std::vector<std::size_t> probe_;   ///< top_ and sample_, ascending
  std::vector<std::size_t> subset_;  ///< the few that race, ascending
  Phase phase_ = Phase::probe;
};

}  // namespace

std::unique_ptr<Strategy> make_warm_start_strategy(const Measurement& measurement) {
  return std::make_unique<WarmStartStrategy>(measurement);
}

}  // namespace disttune
