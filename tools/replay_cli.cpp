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
  disttune::WallClock clock;
  app.add_option("tables", tables, "replay table files (docs/strategies.md, section Replay)")->required();
  app.add_option("--strategy", strategies, "strategies to run (default: search random)");
  app.add_option("--option", options,
                 "a strategy option NAME VALUE, e.g. --option effort quick (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--seeds", seeds, "runs per strategy, seeds 0 .. N-1")
      ->check(CLI::Range(1, 100000));
  app.add_flag("--each", each, "one line per run");
  app.add_option("--compile-threads", clock.compile_threads,
                 "simulated compile threads of the first call's wall clock (default 16)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--launch-ms", clock.launch_ms,
                 "simulated host time of each run on top of its device time (default 0.05)")
      ->check(CLI::Range(0.0, 1e6));
  CLI11_PARSE(app, argc, argv);
  try {
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
