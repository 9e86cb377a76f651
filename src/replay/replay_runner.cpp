// The replay runner: a real Tuning driven by the round driver over one process, runs drawn from a
// table's recorded samples.
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>

#include "disttune/communicator.hpp"
#include "disttune/replay.hpp"
#include "disttune/tuning.hpp"
#include "engine/round_driver.hpp"

namespace disttune {
namespace {

/// Makes the runs a tuning asks for out of the table: each a recorded sample of its entry,
/// drawn with the run's seeded generator; a failed entry fails at its first run.
class TableSite final : public detail::RunSite, public detail::RoundObserver {
 public:
  TableSite(const ReplayTable& table, std::uint64_t seed) : table_(table), draw_(seed) {}

  std::optional<std::vector<double>> time_batch(std::size_t, int) override { return std::nullopt; }
  std::map<std::size_t, detail::CollectedRuns> collect() override { return std::exchange(pending_, {}); }

  void step(const Step& step) override {
    if (step.kind == StepKind::round_end) {
      ++rounds_;
    } else {
      named_.insert(step.candidate);
    }
  }

  void run(const Step& step) {
    const ReplayEntry& entry = table_.entries.at(step.candidate);
    if (entry.failed) throw std::runtime_error(entry.reason);
    const double ms = entry.samples_ms[static_cast<std::size_t>(draw_() % entry.samples_ms.size())];
    device_ms_ += ms;
    if (step.kind == StepKind::timed) pending_[step.candidate].samples.push_back(ms);
  }

  const std::set<std::size_t>& named() const { return named_; }
  double device_ms() const { return device_ms_; }
  int rounds() const { return rounds_; }

 private:
  const ReplayTable& table_;
  std::mt19937_64 draw_;
  std::map<std::size_t, detail::CollectedRuns> pending_;  ///< this round's samples, by candidate
  std::set<std::size_t> named_;
  double device_ms_ = 0.0;
  int rounds_ = 0;
};

}  // namespace

ReplayRun replay_tuning(const ReplayTable& table, Measurement measurement, std::uint64_t seed) {
  std::vector<std::string> candidates;
  for (const ReplayEntry& entry : table.entries) candidates.push_back(entry.config);
  measurement.strategy_options["seed"] = std::to_string(seed);
  Tuning tuning(std::move(candidates), measurement);
  SingleProcessCommunicator alone;
  TableSite site(table, seed);
  detail::RoundDriver driver(
      tuning, alone, detail::ContextMaker{"replay " + table.kernel, "[]", std::chrono::minutes(1)},
      site, site);
  driver.drive([&](const Step& step) { site.run(step); });

  ReplayRun run;
  run.seed = seed;
  run.chosen = tuning.best();
  if (run.chosen) run.ratio = table.entries[*run.chosen].true_ms() / table.best_ms();
  run.measured = site.named().size();
  run.measured_fraction =
      static_cast<double>(run.measured) / static_cast<double>(table.entries.size());
  run.device_s = site.device_ms() / 1000.0;
  for (std::size_t c : site.named()) run.compile_s += table.entries[c].compile_s;
  run.rounds = site.rounds();
  return run;
}

}  // namespace disttune
