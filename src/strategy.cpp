// Strategies: the exhaustive one of the spec, and the factory that picks one by name.
#include "disttune/strategy.hpp"

#include <numeric>
#include <stdexcept>

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

  std::optional<Round> next_round(const std::vector<CandidateStanding>&) override {
    return std::nullopt;
  }

 private:
  Measurement measurement_;
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive_strategy(const Measurement& measurement) {
  return std::make_unique<ExhaustiveStrategy>(measurement);
}

std::unique_ptr<Strategy> make_strategy(const Measurement& measurement) {
  if (measurement.strategy == "exhaustive") return make_exhaustive_strategy(measurement);
  throw std::invalid_argument("disttune: unknown strategy '" + measurement.strategy +
                              "' (known: exhaustive)");
}

}  // namespace disttune
