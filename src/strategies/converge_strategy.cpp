// The converge strategy: race the candidates, sample survivors until their time is known well enough, settle near-ties by interleaved runs.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "disttune/strategy.hpp"
#include "strategies/noise_interval.hpp"
#include "strategies/strategy_options.hpp"

namespace disttune {
namespace {

using detail::TimeEstimate;

/// Samples every candidate gets in the first round: one run of each is enough to screen
/// out the obvious losers, which then cost nothing more.
constexpr int kConvergeFirstRoundSamples = 1;
/// Untimed runs of each candidate before its first sample: a kernel's first launch loads
/// its module (CUDA's lazy loading, Triton's first launch of a compiled kernel), which can
/// cost more than the kernel; a sample of that launch would screen a good candidate out.
constexpr int kFirstRoundWarmups = 1;
/// A candidate with one sample (not the baseline) is dropped only when it is also this much
/// slower than the leader (its spread is not known yet: host gaps, a first run slower than
/// the rest).
constexpr double kScreenMargin = 0.15;
/// Samples before a candidate's spread is trusted enough to stop on it.
constexpr int kMinSamplesToConverge = 5;
/// No candidate gets more samples than this (a noisy one that never converges).
constexpr int kMaxSamples = 256;
/// Warm-up runs before each later round (caches went cold while others ran).
constexpr int kConvergeRewarmRuns = 1;
/// Interleaved runs per contender in the near-tie round.
constexpr int kPairedRuns = 10;

/// converge's named parameters (strategy_options; docs/strategies.md has their table).
struct ConvergeParameters {
  /// A candidate is measured enough once the relative standard error of its statistic is at
  /// most max_noise (0.005: 0.5%) ...
  double max_noise;
  /// ... and it has run for at least min_time_ms of device time (by its agreed time).
  double min_time_ms;
  /// Total device time (ms, by the agreed times) for all candidates together; 0: no budget.
  double budget_ms;
};

/// The parameters given in `measurement` (the others at their defaults); InvalidSetting
/// naming any other option or a value out of range.
ConvergeParameters read_parameters(const Measurement& measurement) {
  const detail::StrategyOptions options(measurement, "converge", detail::converge_options());
  return {options.number("max_noise"), options.number("min_time_ms"), options.number("budget_ms")};
}

TimeEstimate overall(const CandidateStanding& s) { return {s.time_ms, s.noise, s.samples}; }
TimeEstimate last_round(const CandidateStanding& s) {
  return {s.round_time_ms, s.round_noise, s.round_samples};
}

/// Rounds (racing): (1) every candidate, 1 warm-up and 1 timed run; those clearly slower than the leader
/// (and by kScreenMargin) are dropped; (2) each later round, the candidates that are
/// neither converged nor clearly slower than the leader double their samples (one
/// re-warm-up each), within the budget, until one is left or all are converged; (3) the
/// finalists within noise of the leader, unless all are measured precisely within
/// max_noise of it, run interleaved, kPairedRuns each, and are compared on those runs
/// alone. Every decision is on agreed numbers, so every rank takes the same rounds.
class ConvergeStrategy final : public Strategy {
 public:
  explicit ConvergeStrategy(const ConvergeParameters& parameters)
      : max_noise_(parameters.max_noise),
        min_time_ms_(parameters.min_time_ms),
        budget_ms_(parameters.budget_ms) {}

  Round first_round(std::size_t count) override {
    Round round = Round::every(count, kFirstRoundWarmups, kConvergeFirstRoundSamples);
    active_ = round.candidates;
    return round;
  }

  Round next_round(const std::vector<CandidateStanding>& standings) override {
    if (paired_) return settle(standings, paired_contenders_, true);
    drop_clearly_slower(standings);
    if (active_.empty()) {  // every candidate left failed: those dropped come back
      for (std::size_t i : dropped_) {
        if (!standings[i].failed) active_.push_back(i);
      }
      dropped_.clear();
      if (active_.empty()) return Round{};  // every candidate failed
    }
    // Every rival dropped: the choice is made; the survivor needs no more samples once it
    // has two (its time in the record then has a spread).
    if (active_.size() == 1 && !dropped_.empty() && standings[active_[0]].samples >= 2) {
      return settle(standings, active_, false, false);
    }
    double spent_ms = 0.0;
    for (const CandidateStanding& s : standings) {
      if (!s.failed) spent_ms += s.time_ms * s.samples;
    }
    std::vector<std::size_t> needing;
    int fewest = kMaxSamples;
    double per_run_ms = 0.0;
    for (std::size_t i : active_) {
      const CandidateStanding& s = standings[i];
      const bool converged = s.samples >= kMinSamplesToConverge &&
                             s.time_ms * s.samples >= min_time_ms_ &&
                             detail::relative_standard_error(overall(s)) <= max_noise_;
      if (converged || s.samples >= kMaxSamples) continue;
      needing.push_back(i);
      fewest = std::min(fewest, s.samples);
      per_run_ms += s.time_ms;
    }
    const bool budget_spent = budget_ms_ > 0.0 && spent_ms >= budget_ms_;
    if (needing.empty() || budget_spent) return pair_near_ties(standings, spent_ms);
    Round round;
    round.candidates = needing;
    round.warmup_runs = kConvergeRewarmRuns;
    round.timed_runs = std::max(1, std::min(fewest, kMaxSamples - fewest));
    if (budget_ms_ > 0.0 && per_run_ms > 0.0) {
      const double affordable = (budget_ms_ - spent_ms) / per_run_ms - kConvergeRewarmRuns;
      if (affordable < 1.0) return pair_near_ties(standings, spent_ms);
      round.timed_runs = std::min(round.timed_runs, static_cast<int>(affordable));
    }
    return round;
  }

 private:
  /// Drops failed candidates and those whose interval lies wholly above the leader's.
  void drop_clearly_slower(const std::vector<CandidateStanding>& standings) {
    std::optional<std::size_t> leader;
    for (std::size_t i : active_) {
      if (!standings[i].failed && (!leader || standings[i].time_ms < standings[*leader].time_ms)) leader = i;
    }
    std::vector<std::size_t> kept;
    for (std::size_t i : active_) {
      if (standings[i].failed) continue;
      // On one sample the spread is unknown: also beyond the screen margin, and never the
      // baseline (replacing it needs more evidence).
      const bool one_sample = standings[i].samples <= 1;
      const bool screened_out =
          !standings[i].baseline && standings[i].time_ms > standings[*leader].time_ms * (1.0 + kScreenMargin);
      const bool slower =
          detail::clearly_faster(overall(standings[*leader]), overall(standings[i]), detail::kDropWidth);
      if (slower && (!one_sample || screened_out)) {
        dropped_.push_back(i);
      } else {
        kept.push_back(i);
      }
    }
    std::sort(dropped_.begin(), dropped_.end());
    active_ = std::move(kept);
  }

  /// The finalists within noise of the leader (the baseline among them if it is), run
  /// interleaved; or the end when there is no near-tie, when every member of it is
  /// measured within max_noise of the fastest to half of max_noise (any of them is as good:
  /// the choice is the stable one of settle()), or when no budget is left for it.
  Round pair_near_ties(const std::vector<CandidateStanding>& standings, double spent_ms) {
    std::vector<TimeEstimate> estimates;
    for (const CandidateStanding& s : standings) estimates.push_back(overall(s));
    const detail::NoiseChoice first = detail::choose_within_noise(estimates, active_, baseline_of(standings), 0.0);
    double cost_ms = 0.0;
    double fastest_ms = 0.0;
    double slowest_ms = 0.0;
    bool precise = true;
    for (std::size_t i : first.within_noise) {
      cost_ms += standings[i].time_ms * kPairedRuns;
      precise = precise && detail::relative_standard_error(overall(standings[i])) <= max_noise_ / 2;
      fastest_ms = fastest_ms == 0.0 ? standings[i].time_ms : std::min(fastest_ms, standings[i].time_ms);
      slowest_ms = std::max(slowest_ms, standings[i].time_ms);
    }
    const bool affordable = budget_ms_ <= 0.0 || spent_ms + cost_ms <= budget_ms_;
    const bool equivalent = precise && slowest_ms <= fastest_ms * (1.0 + max_noise_);
    if (first.within_noise.empty() || !affordable) return settle(standings, active_, false, false);
    if (equivalent && !baseline_of(standings)) return settle(standings, active_, true, false);
    paired_ = true;
    paired_contenders_ = first.within_noise;
    Round round;
    for (int run = 0; run < kPairedRuns; ++run) {
      for (std::size_t i : paired_contenders_) round.candidates.push_back(i);
    }
    round.warmup_runs = 0;
    round.timed_runs = 1;
    return round;
  }

  /// The end round: the finalists, and the choice among `contenders` on the last round's
  /// numbers (interleaved) or on all samples; `stable`: the lowest index among those
  /// measured within max_noise of the fastest.
  Round settle(const std::vector<CandidateStanding>& standings,
               const std::vector<std::size_t>& contenders, bool stable, bool on_last_round = true) {
    std::vector<TimeEstimate> estimates;
    std::vector<std::size_t> alive;
    for (const CandidateStanding& s : standings) estimates.push_back(on_last_round ? last_round(s) : overall(s));
    for (std::size_t i : contenders) {
      if (!standings[i].failed) alive.push_back(i);
    }
    Round end;
    for (std::size_t i : active_) {
      if (!standings[i].failed) end.candidates.push_back(i);
    }
    const detail::NoiseChoice choice = detail::choose_within_noise(
        estimates, alive, baseline_of(standings), stable ? max_noise_ : 0.0);
    end.chosen = choice.chosen;
    end.within_noise = choice.within_noise;
    return end;
  }

  static std::optional<std::size_t> baseline_of(const std::vector<CandidateStanding>& standings) {
    for (std::size_t i = 0; i < standings.size(); ++i) {
      if (standings[i].baseline && !standings[i].failed) return i;
    }
    return std::nullopt;
  }

  double max_noise_;
  double min_time_ms_;
  double budget_ms_;
  std::vector<std::size_t> active_;   ///< candidates not (yet) dropped, ascending
  std::vector<std::size_t> dropped_;  ///< dropped, kept in case every active one fails
  bool paired_ = false;
  std::vector<std::size_t> paired_contenders_;
};

}  // namespace

namespace detail {

const std::vector<StrategyOption>& converge_options() {
  static const std::vector<StrategyOption> options{
      StrategyOption::seed(), StrategyOption::proportion("max_noise", 0.005),
      StrategyOption::number("min_time_ms", 0.5, 0.0), StrategyOption::number("budget_ms", 0.0, 0.0)};
  return options;
}

}  // namespace detail

std::unique_ptr<Strategy> make_converge_strategy(const Measurement& measurement) {
  return std::make_unique<ConvergeStrategy>(read_parameters(measurement));
}

}  // namespace disttune
