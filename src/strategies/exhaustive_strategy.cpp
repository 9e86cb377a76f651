// The exhaustive strategy of the spec: one round over every candidate.
#include "disttune/strategy.hpp"

#include <numeric>
#include <string>
#include <vector>

#include "strategies/strategy_options.hpp"

namespace disttune {
namespace {

/// One round over every candidate; done after it.
class ExhaustiveStrategy final : public Strategy {
 public:
  explicit ExhaustiveStrategy(const Measurement& measurement) : measurement_(measurement) {}

  Round first_round(std::size_t count) override {
    Round round;
    round.candidates.resize(count);
    std::iota(round.candidates.begin(), round.candidates.end(), std::size_t{0});
    round.warmup_runs = measurement_.warmup_runs;
    round.timed_runs = measurement_.timed_runs;
    return round;
  }

  Round next_round(const std::vector<CandidateStanding>& standings) override {
    Round finalists;  // everyone: no timed runs, measurement ends
    for (std::size_t i = 0; i < standings.size(); ++i) finalists.candidates.push_back(i);
    return finalists;
  }

 private:
  Measurement measurement_;
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive_strategy(const Measurement& measurement) {
  (void)read_declared_options("exhaustive", detail::seed_only_options(), measurement.strategy_options);
  return std::make_unique<ExhaustiveStrategy>(measurement);
}

}  // namespace disttune
