// The exhaustive strategy of the spec, and the name a measurement asks for.
#include "disttune/strategy.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "disttune/settings.hpp"

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
  check_strategy_options(measurement, "exhaustive", {});
  return std::make_unique<ExhaustiveStrategy>(measurement);
}

std::string strategy_name(const Measurement& measurement) {
  if (!measurement.strategy.empty()) return measurement.strategy;
  const std::optional<std::string> chosen = strategy_setting();
  if (!chosen) return std::string(kDefaultStrategy);
  const std::vector<std::string> registered = registered_strategies();
  if (std::find(registered.begin(), registered.end(), *chosen) == registered.end()) {
    std::string names;
    for (const std::string& name : registered) names += (names.empty() ? "" : ", ") + name;
    throw InvalidSetting("disttune: TRITON_DIST_AUTOTUNE_STRATEGY='" + *chosen +
                         "' is not a registered strategy (registered: " + names + ")");
  }
  return *chosen;
}

}  // namespace disttune
