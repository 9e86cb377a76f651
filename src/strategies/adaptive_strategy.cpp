// The adaptive strategy: a few samples for all, more only for those still near the best.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "disttune/strategy.hpp"
#include "strategies/strategy_options.hpp"

namespace disttune {
namespace {

/// Samples every candidate gets in the first round.
constexpr int kFirstRoundSamples = 2;
/// A candidate is dropped only if slower than the best by more than this fraction, and by
/// more than kNoiseWidth times the two candidates' noise added up.
constexpr double kMinMargin = 0.03;
constexpr double kNoiseWidth = 3.0;
/// Warm-up runs before each later round (caches went cold while others ran).
constexpr int kRewarmRuns = 1;

/// Round 1: every candidate, min(warm-up, 1) + 2 timed runs. Each later round: the
/// survivors (within margin of the best) double their samples, up to a cap of twice the
/// measurement's timed runs. Done when one survivor is left or all survivors reached the cap.
class AdaptiveStrategy final : public Strategy {
 public:
  explicit AdaptiveStrategy(const Measurement& measurement)
      : first_warmup_(std::min(measurement.warmup_runs, 1)),
        first_samples_(std::min(kFirstRoundSamples, 2 * measurement.timed_runs)),
        cap_(2 * measurement.timed_runs) {}

  Round first_round(std::size_t count) override {
    Round round = Round::every(count, first_warmup_, first_samples_);
    survivors_ = round.candidates;
    return round;
  }

  Round next_round(const std::vector<CandidateStanding>& standings) override {
    std::optional<std::size_t> best;
    for (std::size_t i : survivors_) {
      if (!standings[i].failed && (!best || standings[i].time_ms < standings[*best].time_ms)) best = i;
    }
    if (!best) return Round{};  // every survivor failed: no finalists
    const CandidateStanding& leader = standings[*best];
    std::vector<std::size_t> kept;
    int fewest_samples = std::numeric_limits<int>::max();
    for (std::size_t i : survivors_) {
      const CandidateStanding& other = standings[i];
      if (other.failed) continue;
      const double margin = std::max(kMinMargin, kNoiseWidth * (other.noise + leader.noise));
      if (other.time_ms <= leader.time_ms * (1.0 + margin)) {
        kept.push_back(i);
        fewest_samples = std::min(fewest_samples, other.samples);
      }
    }
    survivors_ = kept;
    if (kept.size() <= 1 || fewest_samples >= cap_) return Round{kept, 0, 0};
    Round round;
    round.candidates = kept;
    round.warmup_runs = kRewarmRuns;
    round.timed_runs = std::min(fewest_samples, cap_ - fewest_samples);
    return round;
  }

 private:
  int first_warmup_;
  int first_samples_;
  int cap_;
  std::vector<std::size_t> survivors_;
};

}  // namespace

std::unique_ptr<Strategy> make_adaptive_strategy(const Measurement& measurement) {
  (void)read_declared_options("adaptive", detail::seed_only_options(), measurement.strategy_options);
  return std::make_unique<AdaptiveStrategy>(measurement);
}

}  // namespace disttune
