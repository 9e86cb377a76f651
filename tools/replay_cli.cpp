// disttune-replay: runs strategies against recorded replay tables on the CPU, many seeds, and
// reports their quality.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "disttune/replay.hpp"

namespace {

using disttune::ReplayRun;
using disttune::Statistic;
using disttune::summarize;

/// One line per run, then the medians and worsts over the seeds.
void report(const disttune::ReplayTable& table, const std::string& strategy,
            const std::vector<ReplayRun>& runs, bool each) {
  std::vector<double> ratios;
  std::vector<double> fractions;
  std::vector<double> device;
  std::vector<double> rounds;
  std::vector<double> wall;
  std::vector<double> waits;
  std::vector<double> compiled;
  for (const ReplayRun& run : runs) {
    if (each) {
      std::cout << std::defaultfloat << std::setprecision(6) << "  seed " << run.seed << ": "
                << (run.chosen ? "x" + std::to_string(run.ratio) : "nothing chosen")
                << ", measured " << run.measured << " (" << 100.0 * run.measured_fraction
                << "%), device " << run.device_s << " s, compile " << run.compile_s << " s, "
                << run.rounds << " rounds, first call " << run.wall_s << " s (waits on compiles "
                << run.compile_wait_s << " s, " << run.compiled << " compiled)\n";
    }
    ratios.push_back(run.chosen ? run.ratio : 1e9);
    fractions.push_back(run.measured_fraction);
    device.push_back(run.device_s);
    rounds.push_back(run.rounds);
    wall.push_back(run.wall_s);
    waits.push_back(run.compile_wait_s);
    compiled.push_back(static_cast<double>(run.compiled));
  }
  std::cout << std::fixed << std::setprecision(4) << table.kernel << " (" << table.entries.size()
            << " entries) " << strategy << " over " << runs.size() << " seeds: median x"
            << summarize(ratios, Statistic::median) << ", worst x"
            << *std::max_element(ratios.begin(), ratios.end()) << ", median measured "
            << std::setprecision(2) << 100.0 * summarize(fractions, Statistic::median)
            << "%, median device " << std::setprecision(3) << summarize(device, Statistic::median)
            << " s, median rounds " << std::setprecision(0) << summarize(rounds, Statistic::median)
            << "; first call median " << std::setprecision(2) << summarize(wall, Statistic::median)
            << " s, worst " << *std::max_element(wall.begin(), wall.end())
            << " s (median waits on compiles " << summarize(waits, Statistic::median)
            << " s, median compiled " << std::setprecision(0)
            << summarize(compiled, Statistic::median) << ")\n"
            << std::defaultfloat;
}

/// A sweep's keys over the seeds, warm-started and independent: per key the median and worst
/// ratio, how many seeds chose within 2% of the best, the median measured and first-call wall;
/// then the whole sweep's median wall and keys within 2%, and the warm over independent wall.
void report_sweep(const std::vector<disttune::ReplayTable>& tables, const std::string& strategy,
                  const std::vector<std::vector<disttune::SweepKeyRun>>& warm,
                  const std::vector<std::vector<disttune::SweepKeyRun>>& alone) {
  const auto totals = [&](const std::vector<std::vector<disttune::SweepKeyRun>>& seeds, double& wall,
                          double& within) {
    std::vector<double> walls;
    std::vector<double> counts;
    for (const auto& sweep : seeds) {
      double sum = 0.0;
      double good = 0.0;
      for (const disttune::SweepKeyRun& key : sweep) {
        sum += key.run.wall_s;
        good += key.run.chosen && key.run.ratio <= 1.02 ? 1.0 : 0.0;
      }
      walls.push_back(sum);
      counts.push_back(good);
    }
    wall = summarize(walls, Statistic::median);
    within = summarize(counts, Statistic::median);
  };
  std::cout << std::fixed << "sweep of " << tables.size() << " keys, " << strategy << ", " << warm.size()
            << " seeds (per key: warm-started | independent)\n";
  for (std::size_t k = 0; k < tables.size(); ++k) {
    std::cout << "  " << tables[k].problem;
    for (const auto* seeds : {&warm, &alone}) {
      std::vector<double> ratios;
      std::vector<double> measured;
      std::vector<double> wall;
      int good = 0;
      for (const auto& sweep : *seeds) {
        const ReplayRun& run = sweep[k].run;
        ratios.push_back(run.chosen ? run.ratio : 1e9);
        measured.push_back(static_cast<double>(run.measured));
        wall.push_back(run.wall_s);
        good += run.chosen && run.ratio <= 1.02 ? 1 : 0;
      }
      std::cout << (seeds == &warm ? ": " : " | ") << std::setprecision(4) << "x"
                << summarize(ratios, Statistic::median) << " worst x" << *std::max_element(ratios.begin(), ratios.end())
                << ", " << good << "/" << seeds->size() << " within 2%, measured " << std::setprecision(0)
                << summarize(measured, Statistic::median) << ", " << std::setprecision(2)
                << summarize(wall, Statistic::median) << " s";
    }
    std::cout << '\n';
  }
  double warm_wall = 0.0;
  double warm_within = 0.0;
  double alone_wall = 0.0;
  double alone_within = 0.0;
  totals(warm, warm_wall, warm_within);
  totals(alone, alone_wall, alone_within);
  std::cout << std::setprecision(2) << "  whole sweep, medians over seeds: warm-started " << warm_wall << " s, "
            << std::setprecision(0) << warm_within << " keys within 2%; independent " << std::setprecision(2)
            << alone_wall << " s, " << std::setprecision(0) << alone_within << " keys within 2%; warm/independent x"
            << std::setprecision(3) << warm_wall / alone_wall << '\n'
            << std::defaultfloat;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "disttune-replay: run strategies against replay tables (recorded times and failures) on the "
      "CPU"};
  std::vector<std::string> tables;
  std::vector<std::string> strategies{"search", "random"};
  std::map<std::string, std::string> options;
  std::uint64_t seeds = 10;
  bool each = false;
  bool sweep = false;
  std::string compiles = "per-key";
  disttune::WallClock clock;
  app.add_option("tables", tables, "replay table files (docs/strategies.md, section Replay)")->required();
  app.add_option("--strategy", strategies, "strategies to run (default: search random)")
      ->check(CLI::Validator(
          [](std::string& name) {
            return name.empty() ? std::string("a strategy name must not be empty") : std::string();
          },
          "NAME"));
  app.add_option("--option", options,
                 "a strategy option NAME VALUE, e.g. --option effort quick (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--seeds", seeds, "runs per strategy, seeds 0 .. N-1")
      ->check(CLI::Range(1, 100000));
  app.add_flag("--each", each, "one line per run");
  app.add_flag("--sweep", sweep,
               "the tables are one space at several keys (their problems), tuned in the order given: "
               "warm-started from the keys before, against independent tunings");
  app.add_option("--compiles", compiles,
                 "with --sweep: per-key (sizes as compile-time constants) or shared (binaries shared "
                 "by the keys); compile times are the first table's")
      ->check(CLI::IsMember({"per-key", "shared"}));
  app.add_option("--compile-threads", clock.compile_threads,
                 "simulated compile threads of the first call's wall clock (default 16)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--launch-ms", clock.launch_ms,
                 "simulated host time of each run on top of its device time (default 0.05)")
      ->check(CLI::Range(0.0, 1e6));
  CLI11_PARSE(app, argc, argv);
  try {
    if (sweep) {
      std::vector<disttune::ReplayTable> keys;
      for (const std::string& path : tables) keys.push_back(disttune::read_replay_table(path));
      const auto how = compiles == "shared" ? disttune::SweepCompiles::shared : disttune::SweepCompiles::per_key;
      for (const std::string& strategy : strategies) {
        disttune::Measurement measurement;
        measurement.strategy = strategy;
        measurement.strategy_options = options;
        std::vector<std::vector<disttune::SweepKeyRun>> warm;
        std::vector<std::vector<disttune::SweepKeyRun>> alone;
        for (std::uint64_t seed = 0; seed < seeds; ++seed) {
          warm.push_back(disttune::replay_sweep(keys, measurement, seed, clock, how, true));
          alone.push_back(disttune::replay_sweep(keys, measurement, seed, clock, how, false));
        }
        report_sweep(keys, strategy, warm, alone);
      }
      return 0;
    }
    for (const std::string& path : tables) {
      const disttune::ReplayTable table = disttune::read_replay_table(path);
      for (const std::string& strategy : strategies) {
        disttune::Measurement measurement;
        measurement.strategy = strategy;
        measurement.strategy_options = options;
        std::vector<ReplayRun> runs;
        for (std::uint64_t seed = 0; seed < seeds; ++seed)
          runs.push_back(disttune::replay_tuning(table, measurement, seed, clock));
        report(table, strategy, runs, each);
      }
    }
  } catch (const std::exception& error) {
    std::cerr << "disttune-replay: error: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
