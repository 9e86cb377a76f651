// The replay runner: a real Tuning driven by the round driver over one process, runs drawn from a
// table's recorded samples; a sweep of tables, warm-started as the engine does.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>

#include "disttune/communicator.hpp"
#include "disttune/replay.hpp"
#include "disttune/store.hpp"
#include "disttune/tuning.hpp"
#include "engine/prepare_plan.hpp"
#include "engine/round_driver.hpp"
#include "engine/warm_start_prior.hpp"
#include "replay/simulated_compile_pool.hpp"

namespace disttune {
namespace {

std::vector<std::string> configs_of(const ReplayTable& table) {
  std::vector<std::string> configs;
  for (const ReplayEntry& entry : table.entries) configs.push_back(entry.config);
  return configs;
}

/// The entries' compile times as `clock` charges them: recorded, or mapped onto its range.
std::vector<double> compile_times(const ReplayTable& table, const WallClock& clock) {
  std::vector<double> times;
  for (const ReplayEntry& entry : table.entries) times.push_back(entry.compile_s);
  if (clock.compile_max_s <= 0.0 || times.empty()) return times;
  const auto [low, high] = std::minmax_element(times.begin(), times.end());
  const double from = *low;
  const double span = *high - *low;
  for (double& t : times)
    t = clock.compile_min_s + (span > 0.0 ? (t - from) / span : 0.0) * (clock.compile_max_s - clock.compile_min_s);
  return times;
}

/// Makes the runs a tuning asks for out of the table: each a recorded sample of its entry,
/// drawn with the run's seeded generator; a failed entry fails at its first run. Keeps the
/// simulated clock: prepares wait on the simulated compile pool, runs add their time.
class TableSite final : public detail::RunSite, public detail::RoundObserver {
 public:
  TableSite(const ReplayTable& table, std::uint64_t seed, const WallClock& clock, std::vector<double> compile_s)
      : table_(table),
        draw_(seed),
        launch_s_(clock.launch_ms / 1000.0),
        pool_(std::move(compile_s), clock.compile_threads, clock.compile_setup_s, clock.compile_cores),
        plan_([this](std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
                const double ready = pool_.prepare(now_s_, now, ahead);
                wait_s_ += ready - now_s_;
                now_s_ = ready;
                return std::vector<std::string>(now.size());
              },
              table.entries.size()) {}

  std::string prepare(const Tuning& tuning, std::size_t candidate) override {
    return plan_.ready(tuning, candidate);
  }
  std::optional<double> prepared(std::size_t candidate) override { return pool_.finished(candidate, now_s_); }
  bool tells_prepared() const override { return true; }
  void prepare_round(const Tuning& tuning) override { plan_.start_round(tuning); }
  double now_s() override { return now_s_; }
  void wait_prepared(const Tuning&, const std::vector<std::size_t>& candidates, double until_s) override {
    const double ended = std::max(now_s_, std::min(until_s, pool_.first_ended(now_s_, candidates)));
    wait_s_ += ended - now_s_;
    now_s_ = ended;
  }

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
    now_s_ += ms / 1000.0 + launch_s_;
    if (step.kind == StepKind::timed) pending_[step.candidate].samples.push_back(ms);
  }

  const std::set<std::size_t>& named() const { return named_; }
  double device_ms() const { return device_ms_; }
  int rounds() const { return rounds_; }
  double now_s() const { return now_s_; }
  double wait_s() const { return wait_s_; }
  std::size_t compiled() const { return pool_.started_by(now_s_); }
  /// Whether candidate c's compile started before the call returned.
  bool compile_started(std::size_t c) const { return pool_.started(c, now_s_); }

 private:
  const ReplayTable& table_;
  std::mt19937_64 draw_;
  std::map<std::size_t, detail::CollectedRuns> pending_;  ///< this round's samples, by candidate
  std::set<std::size_t> named_;
  double device_ms_ = 0.0;
  int rounds_ = 0;
  double launch_s_;
  double now_s_ = 0.0;   ///< the simulated clock since the call began
  double wait_s_ = 0.0;  ///< of now_s_, waits on compiles
  detail::SimulatedCompilePool pool_;
  detail::PreparePlan plan_;
};

/// One tuning against `table` from `prior` (may be empty), each entry's compile costing
/// `compile_s`; returns the run, the tuning's record and which entries it compiled.
struct KeyReplay {
  ReplayRun run;
  Record record;
  std::vector<bool> compiled;
};

KeyReplay replay_key(const ReplayTable& table, Measurement measurement, std::uint64_t seed, const WallClock& clock,
                     std::vector<double> compile_s, std::vector<std::size_t> prior) {
  const std::size_t count = table.entries.size();
  measurement.strategy_options["seed"] = std::to_string(seed);
  Tuning tuning(configs_of(table), measurement, std::move(prior), static_cast<std::size_t>(clock.compile_threads));
  SingleProcessCommunicator alone;
  const std::vector<double> charged = compile_s;
  TableSite site(table, seed, clock, std::move(compile_s));
  detail::RoundDriver driver(
      tuning, alone, detail::ContextMaker{"replay " + table.kernel, "[]", std::chrono::minutes(1)},
      site, site);
  driver.drive([&](const Step& step) { site.run(step); });

  KeyReplay replay;
  ReplayRun& run = replay.run;
  run.seed = seed;
  run.chosen = tuning.best();
  if (run.chosen) run.ratio = table.entries[*run.chosen].true_ms() / table.best_ms();
  run.measured = site.named().size();
  run.measured_fraction =
      static_cast<double>(run.measured) / static_cast<double>(table.entries.size());
  run.device_s = site.device_ms() / 1000.0;
  for (std::size_t c : site.named()) run.compile_s += charged[c];
  run.rounds = site.rounds();
  run.wall_s = site.now_s();
  run.compile_wait_s = site.wait_s();
  run.compiled = site.compiled();
  replay.record.id.key = table.problem;
  replay.record.candidates = tuning.results();
  replay.record.best_index = run.chosen.value_or(0);
  for (std::size_t c = 0; c < count; ++c) replay.compiled.push_back(site.compile_started(c));
  return replay;
}

void check_clock(const WallClock& clock) {
  if (clock.compile_threads < 1)
    throw std::invalid_argument("disttune: replay wall clock: compile_threads must be >= 1");
  if (!(clock.launch_ms >= 0.0))
    throw std::invalid_argument("disttune: replay wall clock: launch_ms must be >= 0");
  if (!(clock.compile_min_s >= 0.0) || !(clock.compile_max_s >= clock.compile_min_s) || std::isinf(clock.compile_max_s))
    throw std::invalid_argument("disttune: replay wall clock: the compile range must be 0 <= min <= max, finite");
  if (!(clock.compile_setup_s >= 0.0) || std::isinf(clock.compile_setup_s))
    throw std::invalid_argument("disttune: replay wall clock: the compile set-up must be finite and >= 0 seconds");
  if (clock.compile_cores < 0)
    throw std::invalid_argument("disttune: replay wall clock: compile_cores must be >= 0 (0: not shared)");
}

/// Refuses a sweep whose tables are not one space at distinct keys.
void check_sweep(const std::vector<ReplayTable>& tables) {
  if (tables.empty()) throw std::invalid_argument("disttune: a replayed sweep needs at least one table");
  std::set<std::string> keys;
  for (const ReplayTable& table : tables) {
    if (!keys.insert(table.problem).second)
      throw std::invalid_argument("disttune: replayed sweep: two tables have the problem " + table.problem);
    const bool same_space =
        table.entries.size() == tables.front().entries.size() &&
        std::equal(table.entries.begin(), table.entries.end(), tables.front().entries.begin(),
                   [](const ReplayEntry& a, const ReplayEntry& b) { return a.config == b.config; });
    if (!same_space)
      throw std::invalid_argument("disttune: replayed sweep: table " + table.kernel + " has not the configs of " +
                                  tables.front().kernel + " in the same order");
  }
}

}  // namespace

ReplayRun replay_tuning(const ReplayTable& table, Measurement measurement, std::uint64_t seed,
                        const WallClock& clock) {
  check_clock(clock);
  return replay_key(table, std::move(measurement), seed, clock, compile_times(table, clock), {}).run;
}

std::vector<SweepKeyRun> replay_sweep(const std::vector<ReplayTable>& tables, Measurement measurement,
                                      std::uint64_t seed, const WallClock& clock, SweepCompiles compiles,
                                      bool warm_start) {
  check_clock(clock);
  check_sweep(tables);
  const std::vector<double> first = compile_times(tables.front(), clock);
  std::vector<bool> built(first.size(), false);
  const std::vector<std::string> candidates = configs_of(tables.front());
  std::vector<Record> records;
  std::vector<SweepKeyRun> sweep;
  for (const ReplayTable& table : tables) {
    std::vector<double> compile_s = first;
    for (std::size_t c = 0; c < compile_s.size(); ++c) {
      if (compiles == SweepCompiles::shared && built[c]) compile_s[c] = 0.0;
    }
    WarmStart prior;
    if (warm_start) prior = detail::neighbour_prior(records, table.problem, candidates, nullptr);
    KeyReplay replay = replay_key(table, measurement, seed, clock, std::move(compile_s), prior.prior);
    for (std::size_t c = 0; c < built.size(); ++c) built[c] = built[c] || replay.compiled[c];
    records.push_back(std::move(replay.record));
    sweep.push_back({table.problem, replay.run, prior.from_keys});
  }
  return sweep;
}

}  // namespace disttune
