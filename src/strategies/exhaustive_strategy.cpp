// The exhaustive strategy of the spec: one round over every candidate.
#include "disttune/strategy.hpp"

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
    return Round::every(count, measurement_.warmup_runs, measurement_.timed_runs);
  }

  Round next_round(const std::vector<CandidateStanding>& standings) override {
    return Round::every(standings.size(), 0, 0);  // everyone: no timed runs, measurement ends
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
