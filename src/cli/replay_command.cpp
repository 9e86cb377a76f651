// The replay subcommand: strategies against recorded replay tables on the CPU, many seeds,
// and their quality (docs/strategies.md, section Replay).
#include "cli/replay_command.hpp"

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "disttune/replay.hpp"

namespace disttune::cli {
namespace {

/// One line per run, then the medians and worsts over the seeds.
void report(const ReplayTable& table, const std::string& strategy,
            const std::vector<ReplayRun>& runs, bool each, std::ostream& out) {
  std::vector<double> ratios;
  std::vector<double> fractions;
  std::vector<double> device;
  std::vector<double> rounds;
  std::vector<double> wall;
  std::vector<double> waits;
  std::vector<double> compiled;
  for (const ReplayRun& run : runs) {
    if (each) {
      // The ratio as std::to_string writes it; the chosen-or-not text streamed in two parts
      // (`"x" + std::to_string(...)` trips GCC 12's -Wrestrict at -O3, a false positive).
      out << std::defaultfloat << std::setprecision(6) << "  seed " << run.seed << ": "
          << (run.chosen ? "x" : "nothing chosen") << (run.chosen ? std::to_string(run.ratio) : "")
          << ", measured " << run.measured << " (" << 100.0 * run.measured_fraction << "%), device "
          << run.device_s << " s, compile " << run.compile_s << " s, " << run.rounds
          << " rounds, first call " << run.wall_s << " s (waits on compiles " << run.compile_wait_s
          << " s, " << run.compiled << " compiled)\n";
    }
    ratios.push_back(run.chosen ? run.ratio : 1e9);
    fractions.push_back(run.measured_fraction);
    device.push_back(run.device_s);
    rounds.push_back(run.rounds);
    wall.push_back(run.wall_s);
    waits.push_back(run.compile_wait_s);
    compiled.push_back(static_cast<double>(run.compiled));
  }
  const auto space = static_cast<double>(table.entries.size());
  out << std::fixed << std::setprecision(4) << table.kernel << " (" << table.entries.size()
      << " entries) " << strategy << " over " << runs.size() << " seeds: median x"
      << summarize(ratios, Statistic::median) << ", worst x"
      << *std::max_element(ratios.begin(), ratios.end()) << ", median measured "
      << std::setprecision(2) << 100.0 * summarize(fractions, Statistic::median)
      << "%, median device " << std::setprecision(3) << summarize(device, Statistic::median)
      << " s, median rounds " << std::setprecision(0) << summarize(rounds, Statistic::median)
      << "; first call median " << std::setprecision(2) << summarize(wall, Statistic::median)
      << " s, worst " << *std::max_element(wall.begin(), wall.end())
      << " s (median waits on compiles " << summarize(waits, Statistic::median)
      << " s, median compiled " << std::setprecision(0) << summarize(compiled, Statistic::median)
      << ")" << std::setprecision(2) << "; compiled vs measured: median "
      << 100.0 * summarize(compiled, Statistic::median) / space << "% vs "
      << 100.0 * summarize(fractions, Statistic::median) << "%, most "
      << 100.0 * *std::max_element(compiled.begin(), compiled.end()) / space << "% vs "
      << 100.0 * *std::max_element(fractions.begin(), fractions.end()) << "% of the space\n"
      << std::defaultfloat;
}

/// A sweep's keys over the seeds, warm-started and independent: per key the median and worst
/// ratio, how many seeds chose within 2% of the best, the median measured, compiled and
/// first-call wall; then the whole sweep's median wall and keys within 2%, the warm over
/// independent wall, and the warm-started sweep's median compiles and measured configs.
void report_sweep(const std::vector<ReplayTable>& tables, const std::string& strategy,
                  const std::vector<std::vector<SweepKeyRun>>& warm,
                  const std::vector<std::vector<SweepKeyRun>>& alone, std::ostream& out) {
  struct Totals {
    double wall_s = 0.0;
    double within = 0.0;
    double compiled = 0.0;
    double measured = 0.0;
  };
  const auto totals = [&](const std::vector<std::vector<SweepKeyRun>>& seeds) {
    std::vector<double> walls;
    std::vector<double> counts;
    std::vector<double> compiled;
    std::vector<double> measured;
    for (const auto& sweep : seeds) {
      Totals sum;
      for (const SweepKeyRun& key : sweep) {
        sum.wall_s += key.run.wall_s;
        sum.within += key.run.chosen && key.run.ratio <= 1.02 ? 1.0 : 0.0;
        sum.compiled += static_cast<double>(key.run.compiled);
        sum.measured += static_cast<double>(key.run.measured);
      }
      walls.push_back(sum.wall_s);
      counts.push_back(sum.within);
      compiled.push_back(sum.compiled);
      measured.push_back(sum.measured);
    }
    return Totals{summarize(walls, Statistic::median), summarize(counts, Statistic::median),
                  summarize(compiled, Statistic::median), summarize(measured, Statistic::median)};
  };
  out << std::fixed << "sweep of " << tables.size() << " keys, " << strategy << ", " << warm.size()
      << " seeds (per key: warm-started | independent)\n";
  for (std::size_t k = 0; k < tables.size(); ++k) {
    out << "  " << tables[k].problem;
    for (const auto* seeds : {&warm, &alone}) {
      std::vector<double> ratios;
      std::vector<double> measured;
      std::vector<double> compiled;
      std::vector<double> wall;
      int good = 0;
      for (const auto& sweep : *seeds) {
        const ReplayRun& run = sweep[k].run;
        ratios.push_back(run.chosen ? run.ratio : 1e9);
        measured.push_back(static_cast<double>(run.measured));
        compiled.push_back(static_cast<double>(run.compiled));
        wall.push_back(run.wall_s);
        good += run.chosen && run.ratio <= 1.02 ? 1 : 0;
      }
      out << (seeds == &warm ? ": " : " | ") << std::setprecision(4) << "x"
          << summarize(ratios, Statistic::median) << " worst x"
          << *std::max_element(ratios.begin(), ratios.end()) << ", " << good << "/" << seeds->size()
          << " within 2%, measured " << std::setprecision(0)
          << summarize(measured, Statistic::median) << ", compiled "
          << summarize(compiled, Statistic::median) << ", " << std::setprecision(2)
          << summarize(wall, Statistic::median) << " s";
    }
    out << '\n';
  }
  const Totals warm_total = totals(warm);
  const Totals alone_total = totals(alone);
  out << std::setprecision(2) << "  whole sweep, medians over seeds: warm-started "
      << warm_total.wall_s << " s, " << std::setprecision(0) << warm_total.within
      << " keys within 2%; independent " << std::setprecision(2) << alone_total.wall_s << " s, "
      << std::setprecision(0) << alone_total.within << " keys within 2%; warm/independent x"
      << std::setprecision(3) << warm_total.wall_s / alone_total.wall_s
      << "; warm-started compiled " << std::setprecision(0) << warm_total.compiled << ", measured "
      << warm_total.measured << '\n'
      << std::defaultfloat;
}

// --sweep: the tables as the keys of one space, each strategy warm-started and independent.
void run_sweep(const CommandArguments& arguments, const Measurement& base, const WallClock& clock,
               std::ostream& out) {
  std::vector<ReplayTable> keys;
  for (const std::string& path : arguments.texts("tables")) keys.push_back(read_replay_table(path));
  const auto how =
      arguments.text("--compiles") == "shared" ? SweepCompiles::shared : SweepCompiles::per_key;
  const auto seeds = static_cast<std::uint64_t>(arguments.integer("--seeds"));
  for (const std::string& strategy : arguments.texts("--strategy")) {
    Measurement measurement = base;
    measurement.strategy = strategy;
    std::vector<std::vector<SweepKeyRun>> warm;
    std::vector<std::vector<SweepKeyRun>> alone;
    for (std::uint64_t seed = 0; seed < seeds; ++seed) {
      warm.push_back(replay_sweep(keys, measurement, seed, clock, how, true));
      alone.push_back(replay_sweep(keys, measurement, seed, clock, how, false));
    }
    report_sweep(keys, strategy, warm, alone, out);
  }
}

}  // namespace

int run_replay(const CommandArguments& arguments, std::ostream& out) {
  for (const std::string& strategy : arguments.texts("--strategy")) {
    if (strategy.empty()) throw CliError("--strategy: a strategy name must not be empty");
  }
  WallClock clock;
  clock.compile_threads = static_cast<int>(arguments.integer("--compile-threads"));
  clock.launch_ms = arguments.real("--launch-ms");
  clock.compile_min_s = arguments.real("--compile-min-s");
  clock.compile_max_s = arguments.real("--compile-max-s");
  clock.compile_setup_s = arguments.real("--compile-setup-s");
  clock.compile_cores = static_cast<int>(arguments.integer("--compile-cores"));
  if (clock.compile_max_s > 0.0 && clock.compile_min_s > clock.compile_max_s)
    throw CliError("--compile-min-s must not exceed --compile-max-s");
  Measurement base;
  base.strategy_options = arguments.pairs("--option");
  if (arguments.flag("--sweep")) {
    run_sweep(arguments, base, clock, out);
    return 0;
  }
  const auto seeds = static_cast<std::uint64_t>(arguments.integer("--seeds"));
  for (const std::string& path : arguments.texts("tables")) {
    const ReplayTable table = read_replay_table(path);
    for (const std::string& strategy : arguments.texts("--strategy")) {
      Measurement measurement = base;
      measurement.strategy = strategy;
      std::vector<ReplayRun> runs;
      for (std::uint64_t seed = 0; seed < seeds; ++seed)
        runs.push_back(replay_tuning(table, measurement, seed, clock));
      report(table, strategy, runs, arguments.flag("--each"), out);
    }
  }
  return 0;
}

}  // namespace disttune::cli
