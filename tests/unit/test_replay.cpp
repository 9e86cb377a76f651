// Tests of replay mode (src/replay/): tables refused with clear errors, the runner, sweeps, and
// strategy quality on every recorded table and on the recorded buckets.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "disttune/config.hpp"
#include "disttune/replay.hpp"
#include "disttune/strategy.hpp"
#include "keeps_compile_threads.hpp"

namespace disttune {
namespace {

std::string table_text(const Value& entries, int version = 1, const Value& problem = nullptr) {
  Value table{{"format", "disttune.replay_table"}, {"version", version}, {"kernel", "k"}, {"entries", entries}};
  if (!problem.is_null()) table["problem"] = problem;
  return table.dump();
}

Value ok_entry(int block, std::vector<double> samples) {
  return Value{{"config", {{"BLOCK", block}}},
               {"status", "ok"},
               {"samples_ms", samples},
               {"compile_s", 1.5}};
}

Value failed_entry(int block) {
  return Value{{"config", {{"BLOCK", block}}},
               {"status", "failed"},
               {"reason", "out of resources: shared memory"}};
}

/// Expects parse_replay_table(text) to throw BadReplayTable whose message holds `part`.
void expect_refused(const std::string& text, const std::string& part) {
  try {
    (void)parse_replay_table(text, "t.json");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const BadReplayTable& error) {
    EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("t.json"), std::string::npos) << error.what();
  }
}

TEST(ReplayTable, ReadsEntriesAndTheirTrueTimes) {
  const ReplayTable table = parse_replay_table(
      table_text(
          Value::array({ok_entry(32, {2.0, 1.0, 3.0}), failed_entry(64), ok_entry(16, {0.5})})),
      "t.json");
  ASSERT_EQ(table.entries.size(), 3u);
  EXPECT_EQ(table.entries[0].config, R"({"BLOCK":32})");
  EXPECT_DOUBLE_EQ(table.entries[0].true_ms(), 2.0);
  EXPECT_TRUE(table.entries[1].failed);
  EXPECT_EQ(table.entries[1].reason, "out of resources: shared memory");
  EXPECT_DOUBLE_EQ(table.best_ms(), 0.5);
  EXPECT_DOUBLE_EQ(table.entries[0].compile_s, 1.5);
}

TEST(ReplayTable, BadTablesAreRefusedNamingTheProblem) {
  expect_refused("{not json", "not JSON");
  expect_refused("[1, 2]", "not a JSON object");
  expect_refused(R"({"format": "other", "version": 1})", "\"format\"");
  expect_refused(table_text(Value::array({ok_entry(1, {1.0})}), 2), "version 1");
  expect_refused(table_text(Value::array()), "\"entries\" must be a non-empty array");
  expect_refused(table_text(Value::array({Value{{"status", "ok"}}})), "entry 0 has no \"config\"");
  expect_refused(table_text(Value::array({ok_entry(1, {})})), "entry 0 is ok without");
  expect_refused(table_text(Value::array({ok_entry(1, {1.0}), ok_entry(2, {-1.0})})),
                 "entry 1 \"samples_ms\"");
  expect_refused(table_text(Value::array({ok_entry(1, {1.0}), ok_entry(1, {2.0})})),
                 "entry 1 repeats");
  expect_refused(table_text(Value::array({failed_entry(1)})), "no entry with status \"ok\"");
  Value odd = ok_entry(1, {1.0});
  odd["status"] = "maybe";
  expect_refused(table_text(Value::array({odd})), "\"status\" must be \"ok\" or \"failed\"");
  Value unexplained = failed_entry(2);
  unexplained.erase("reason");
  expect_refused(table_text(Value::array({ok_entry(1, {1.0}), unexplained})),
                 "entry 1 failed without");
  EXPECT_THROW((void)read_replay_table("/nonexistent/table.json"), BadReplayTable);
}

// A table's "problem" or "device" nested 100,000 deep is refused before it is copied or
// printed (those walks recurse), as is an entry's config.
TEST(ReplayTable, DeepNestingIsRefusedBeforeItIsCopied) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string entries = table_text(Value::array({ok_entry(1, {1.0})}));
  for (const std::string field : {"problem", "device"}) {
    std::string text = entries;
    text.insert(1, "\"" + field + "\":" + deep + ",");
    expect_refused(text, "nests deeper than");
  }
  std::string deep_config = entries;
  deep_config.replace(deep_config.find(R"({"BLOCK":1})"), 11, deep);
  expect_refused(deep_config, "nests deeper than");
}

// A FIFO (or a device, a directory) is refused before it is read: reading it would block
// for ever or never end.
TEST(ReplayTable, OnlyARegularFileIsRead) {
  const std::filesystem::path fifo =
      std::filesystem::temp_directory_path() / ("replay-fifo-" + std::to_string(getpid()));
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo.string(), std::string("/dev/zero"), std::string("/tmp")}) {
    try {
      (void)read_replay_table(path);
      ADD_FAILURE() << "read " << path;
    } catch (const BadReplayTable& error) {
      EXPECT_NE(std::string(error.what()).find("a replay table is read from a regular file only"),
                std::string::npos)
          << error.what();
    }
  }
  std::filesystem::remove(fifo);
}

// A kernel name is printed: its control characters (a terminal's escape sequences, a
// newline) are kept as escapes, never obeyed.
TEST(ReplayTable, TheKernelNameIsOnePrintableLine) {
  Value json = Value::parse(table_text(Value::array({ok_entry(1, {1.0})})));
  json["kernel"] = "k\x1b[2J\nsecond line";
  EXPECT_EQ(parse_replay_table(json.dump(), "t.json").kernel, "k\\x1b[2J\\nsecond line");
}

TEST(ReplayRunner, ExhaustiveMeasuresEveryEntryAndFailuresFail) {
  const ReplayTable table =
      parse_replay_table(table_text(Value::array({ok_entry(32, {2.0}), failed_entry(64),
                                                  ok_entry(16, {0.5, 0.6}), ok_entry(8, {1.0})})),
                         "t.json");
  Measurement m;
  m.strategy = "exhaustive";
  m.warmup_runs = 1;
  m.timed_runs = 2;
  const ReplayRun run = replay_tuning(table, m, 7);
  EXPECT_EQ(run.chosen, 2u);
  EXPECT_DOUBLE_EQ(run.ratio, 1.0);
  EXPECT_EQ(run.measured, 4u);
  EXPECT_DOUBLE_EQ(run.measured_fraction, 1.0);
  EXPECT_EQ(run.rounds, 1);
  EXPECT_DOUBLE_EQ(run.compile_s, 1.5 * 3);
  // 3 runs of each ok entry (its samples), none of the failed one.
  EXPECT_GE(run.device_s, (3 * 2.0 + 3 * 0.5 + 3 * 1.0) / 1000.0);
  EXPECT_LE(run.device_s, (3 * 2.0 + 3 * 0.6 + 3 * 1.0) / 1000.0);
  EXPECT_EQ(replay_tuning(table, m, 7).device_s, run.device_s);  // seeded
}

Value timed_entry(int block, double ms, double compile_s) {
  Value entry = ok_entry(block, {ms});
  entry["compile_s"] = compile_s;
  return entry;
}

// The wall clock of a first call, by hand: candidate 0 compiles 1 s then runs 3 x 2 ms,
// candidate 1 compiles 2 s then runs 3 x 1 ms, candidate 2 compiles 0.5 s and fails.
TEST(ReplayWallClock, RunsWaitForTheirCompilesOnTheSimulatedThreads) {
  const ReplayTable table = parse_replay_table(
      table_text(Value::array({timed_entry(1, 2.0, 1.0), timed_entry(2, 1.0, 2.0),
                               Value{{"config", {{"BLOCK", 3}}},
                                     {"status", "failed"},
                                     {"reason", "out of resources"},
                                     {"compile_s", 0.5}}})),
      "t.json");
  Measurement m;
  m.strategy = "exhaustive";
  m.warmup_runs = 1;
  m.timed_runs = 2;
  // One thread: 0 ends at 1 s, its runs to 1.006 s; 1 (started at 1 s) ends at 3 s, its
  // runs to 3.003 s; 2 compiles from 3 s to 3.5 s, then fails without a run.
  const ReplayRun one = replay_tuning(table, m, 0, WallClock{1, 0.0});
  EXPECT_NEAR(one.wall_s, 3.5, 1e-9);
  EXPECT_NEAR(one.compile_wait_s, 1.0 + (3.0 - 1.006) + (3.5 - 3.003), 1e-9);
  EXPECT_EQ(one.compiled, 3u);
  // Two threads: 0 and 1 compile at once, 2 on the first thread free (1 s to 1.5 s), ready
  // before its turn: 1 s wait, runs, wait to 2 s, runs to 2.003 s.
  const ReplayRun two = replay_tuning(table, m, 0, WallClock{2, 0.0});
  EXPECT_NEAR(two.wall_s, 2.003, 1e-9);
  EXPECT_NEAR(two.compile_wait_s, 1.0 + (2.0 - 1.006), 1e-9);
  // Each run's host time adds to the runs, not to the compiles.
  const ReplayRun launched = replay_tuning(table, m, 0, WallClock{2, 0.5});
  EXPECT_NEAR(launched.wall_s, 2.0 + 3 * (0.001 + 0.0005), 1e-9);
  // Slow compiles: 0.5, 1 and 2 s mapped onto [2, 3] s (2, 2.33 and 3 s), one thread: 0 from
  // 0 to 2.33 s, 1 to 5.33 s, 2 to 7.33 s.
  const ReplayRun slow = replay_tuning(table, m, 0, WallClock{1, 0.0, 2.0, 3.0});
  EXPECT_NEAR(slow.wall_s, 2.0 + 1.0 / 3.0 + 3.0 + 2.0, 1e-9);
  EXPECT_NEAR(slow.compile_s, 2.0 + 1.0 / 3.0 + 3.0 + 2.0, 1e-9);
  // A compiler set-up of 1.5 s in a fresh process, two threads: 0 and 1 start at once and end
  // 1.5 s plus their own 1 and 2 s in (2.5 and 3.5 s); 2 starts at 2.5 s, after it, and ends at
  // 3 s. Runs of 0 to 2.506 s, a wait to 3.5 s, runs of 1 to 3.503 s.
  const ReplayRun setup = replay_tuning(table, m, 0, WallClock{2, 0.0, 0.0, 0.0, 1.5});
  EXPECT_NEAR(setup.wall_s, 3.503, 1e-9);
  EXPECT_NEAR(setup.compile_wait_s, 2.5 + (3.5 - 2.506), 1e-9);
  EXPECT_THROW((void)replay_tuning(table, m, 0, WallClock{1, 0.0, 0.0, 0.0, -1.0}), std::invalid_argument);
  EXPECT_THROW((void)replay_tuning(table, m, 0, WallClock{1, 0.0, 3.0, 2.0}), std::invalid_argument);
  EXPECT_THROW((void)replay_tuning(table, m, 0, WallClock{0, 0.0}), std::invalid_argument);
  EXPECT_THROW((void)replay_tuning(table, m, 0, WallClock{1, -1.0}), std::invalid_argument);
}

/// Round 1 measures candidate 0 and names candidate 1 ahead; round 2 measures candidate 1.
class AheadThenMeasure final : public Strategy {
 public:
  std::vector<std::size_t> ahead() const override {
    return rounds_ == 0 ? std::vector<std::size_t>{1} : std::vector<std::size_t>{};
  }
  Round first_round(std::size_t) override { return Round{{0}, 0, 1}; }
  Round next_round(const std::vector<CandidateStanding>&) override {
    return ++rounds_ == 1 ? Round{{1}, 0, 1} : Round{{0, 1}, 0, 0};
  }

 private:
  int rounds_ = 0;
};

// A candidate named ahead compiles on a free thread during the round before its own.
// The strategy is told the simulated pool's threads, as a front end tells its own: a replay
// on N threads is the tuning a first call on N compile threads makes, the same at every run.
TEST(ReplayWallClock, TheStrategyIsToldTheSimulatedCompileThreads) {
  static std::size_t threads = 0;
  register_strategy("test_replay_keeps_compile_threads",
                    [](const Measurement&) { return std::make_unique<testing::KeepsCompileThreads>(threads); });
  const ReplayTable table = parse_replay_table(table_text(Value::array({timed_entry(1, 2.0, 1.0)})), "t.json");
  Measurement m;
  m.strategy = "test_replay_keeps_compile_threads";
  (void)replay_tuning(table, m, 0);
  EXPECT_EQ(threads, 16u);
  (void)replay_tuning(table, m, 0, WallClock{5, 0.0});
  EXPECT_EQ(threads, 5u);
}

TEST(ReplayWallClock, AheadCompilesDuringTheRoundBefore) {
  register_strategy("test_ahead_then_measure",
                    [](const Measurement&) { return std::make_unique<AheadThenMeasure>(); });
  const ReplayTable table = parse_replay_table(
      table_text(Value::array({timed_entry(1, 1.0, 1.0), timed_entry(2, 1.0, 2.0)})), "t.json");
  Measurement m;
  m.strategy = "test_ahead_then_measure";
  // Two threads: 1 compiles from 0 s to 2 s while 0 compiles (to 1 s) and runs (1 ms).
  const ReplayRun two = replay_tuning(table, m, 0, WallClock{2, 0.0});
  EXPECT_NEAR(two.wall_s, 2.001, 1e-9);
  EXPECT_NEAR(two.compile_wait_s, 1.0 + (2.0 - 1.001), 1e-9);
  EXPECT_EQ(two.rounds, 2);
  // One thread: 1 waits for 0's compile, then compiles from 1 s to 3 s.
  EXPECT_NEAR(replay_tuning(table, m, 0, WallClock{1, 0.0}).wall_s, 3.001, 1e-9);
}

// A round does not wait on one slow compile while other candidates are ready: over a
// 400-config space whose configs compile in 1 s but those of BLOCK 0 (5%) in 60 s, the search
// runs what has compiled and leaves a slow one out of its round until it has compiled (the
// budget's last round waits half a compile for those still compiling, then drops them), so no
// simulated first call of seeds 0-19 waits the 60 s (today at most 7.6 s, 6.6 s before
// session 17; before any leaving out, 14 of the 20 took 63-180 s). Its choices stay within
// 1.1x of the best (BLOCK 7, WARPS 3). On the simulated clock, no wall clock.
TEST(ReplayWallClock, ARoundDoesNotWaitOnADeliberatelySlowCompile) {
  Value entries = Value::array();
  for (int block = 0; block < 20; ++block) {
    for (int warps = 0; warps < 20; ++warps) {
      entries.push_back(Value{{"config", {{"BLOCK", block}, {"WARPS", warps}}},
                              {"status", "ok"},
                              {"samples_ms", {1.0 + 0.01 * std::abs(block - 7) + 0.02 * std::abs(warps - 3)}},
                              {"compile_s", block == 0 ? 60.0 : 1.0}});
    }
  }
  const ReplayTable table = parse_replay_table(table_text(entries), "slow_block_0.json");
  Measurement m;
  m.strategy = "search";
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const ReplayRun run = replay_tuning(table, m, seed);
    EXPECT_LT(run.wall_s, 20.0) << "seed " << seed;
    ASSERT_TRUE(run.chosen) << "seed " << seed;
    EXPECT_LE(run.ratio, 1.1) << "seed " << seed;
  }
}

/// Seeds 0 .. kQualitySeeds-1: enough that one lucky or unlucky seed moves nothing.
constexpr std::uint64_t kQualitySeeds = 50;

struct Quality {
  double median_ratio;
  double worst_ratio;
  int within_1_05;  ///< seeds whose choice is within 1.05x of the table's best
  int within_1_01;  ///< ... within 1.01x
  double most_measured;
  double most_compiled;  ///< the largest share of the space a seed compiled (speculation included)
  double median_first_call_s;  ///< the simulated first call (ReplayRun::wall_s), median
};

/// `strategy` with `options` against `table`, seeds 0 .. kQualitySeeds-1, a first call
/// simulated on `clock`.
Quality quality(const ReplayTable& table, const std::string& strategy,
                const std::map<std::string, std::string>& options = {}, const WallClock& clock = {}) {
  Measurement m;
  m.strategy = strategy;
  m.strategy_options = options;
  std::vector<double> ratios;
  std::vector<double> first_calls;
  Quality q{};
  for (std::uint64_t seed = 0; seed < kQualitySeeds; ++seed) {
    const ReplayRun run = replay_tuning(table, m, seed, clock);
    ratios.push_back(run.chosen ? run.ratio : 1e9);
    first_calls.push_back(run.wall_s);
    q.most_measured = std::max(q.most_measured, run.measured_fraction);
    q.most_compiled =
        std::max(q.most_compiled, static_cast<double>(run.compiled) / static_cast<double>(table.entries.size()));
  }
  q.within_1_05 =
      static_cast<int>(std::count_if(ratios.begin(), ratios.end(), [](double r) { return r <= 1.05; }));
  q.within_1_01 =
      static_cast<int>(std::count_if(ratios.begin(), ratios.end(), [](double r) { return r <= 1.01; }));
  q.median_ratio = summarize(ratios, Statistic::median);
  q.worst_ratio = *std::max_element(ratios.begin(), ratios.end());
  q.median_first_call_s = summarize(first_calls, Statistic::median);
  return q;
}

/// The tables the search's constants were chosen on (sessions 10-14); the others in
/// tests/data/replay were recorded after, and no constant has been chosen on them but
/// session 15's flat_knob (1%, among 0.5%, 1% and 2%) and session 16's after_fastest (16,
/// among 0, 8, 12, 16 and 24) and feasibility=auto as the default, each chosen
/// leave-one-table-out on every recorded table (docs/strategies.md).
const std::set<std::string> kTunedOn = {"layer_norm_fp16_32768x4096", "matmul_fp16_3072",
                                        "split_k_fp16_128x8192x8192"};

/// The recorded tables (tests/data/replay/*.json).
std::vector<ReplayTable> recorded_tables() {
  std::vector<std::filesystem::path> paths;
  for (const auto& file : std::filesystem::directory_iterator(DISTTUNE_REPLAY_TABLES)) {
    if (file.path().extension() == ".json") paths.push_back(file.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<ReplayTable> tables;
  for (const auto& path : paths) tables.push_back(read_replay_table(path.string()));
  return tables;
}

/// The recorded tables the constants were chosen on (`tuned_on`), or the others.
std::vector<ReplayTable> recorded_tables(bool tuned_on) {
  std::vector<ReplayTable> tables = recorded_tables();
  std::erase_if(tables, [&](const ReplayTable& table) { return kTunedOn.contains(table.kernel) != tuned_on; });
  return tables;
}

void print_quality(const std::string& kernel, const std::string& label, const Quality& q) {
  std::cout << kernel << ": " << label << " median x" << q.median_ratio << " worst x" << q.worst_ratio << ", "
            << q.within_1_05 << " of " << kQualitySeeds << " within 1.05x; at most " << 100.0 * q.most_measured
            << "% measured, " << 100.0 * q.most_compiled << "% compiled\n";
}

/// Bounds a table's replayed figures must keep, seeds 0-49.
struct QualityBound {
  double median;
  double worst;
  int within_1_05;
};

/// `q` within `bound` and the budget: at most 5% of the space measured, 8% compiled.
void expect_within(const std::string& kernel, const Quality& q, const QualityBound& bound) {
  EXPECT_LE(q.most_measured, 0.05) << kernel;
  EXPECT_LE(q.most_compiled, 0.08) << kernel;
  EXPECT_LE(q.median_ratio, bound.median) << kernel;
  EXPECT_LE(q.worst_ratio, bound.worst) << kernel;
  EXPECT_GE(q.within_1_05, bound.within_1_05) << kernel;
}

// The recorded tables (tests/data/replay, measured on an H200), seeds 0-49: the search
// reaches a median within 1.005x of the table's best (today at most 1.0033x, matmul) with at
// most 5% of the space measured and at most 8% compiled, speculation included (today at most
// 7.9%: a fastest found late grows the budget to 5%, and so the bound on speculation; layer
// norm, whose compiles take 1.8 s, widens its rounds and measures 5% too), and beats random
// search on the same budget. Each table keeps today's seeds within 1.05x and worst seed: layer
// norm 50 of 50, x1.038 (x1.037 before session 17); matmul 50, x1.033; split-K 45, x1.213
// (three configs within 1.05x sit in a narrow basin four one-level moves from the BLOCK_K 32,
// SPLIT_K 2-4 one where its bad seeds end; before session 16's after_fastest: 42 of 50,
// matmul's worst x1.035). docs/strategies.md has the numbers. Replay is deterministic given the seed: no wall clock.
TEST(ReplayQuality, SearchOnEveryRecordedTable) {
  const std::map<std::string, QualityBound> bounds = {
      {"layer_norm_fp16_32768x4096", {1.005, 1.04, 50}},
      {"matmul_fp16_3072", {1.005, 1.04, 50}},
      {"split_k_fp16_128x8192x8192", {1.005, 1.22, 45}},
  };
  const std::vector<ReplayTable> tables = recorded_tables(true);
  ASSERT_EQ(tables.size(), kTunedOn.size()) << "expected the recorded tables in " << DISTTUNE_REPLAY_TABLES;
  for (const ReplayTable& table : tables) {
    const Quality search = quality(table, "search");
    const Quality random = quality(table, "random");
    print_quality(table.kernel, "search", search);
    std::cout << table.kernel << ": random median x" << random.median_ratio << " worst x"
              << random.worst_ratio << '\n';
    expect_within(table.kernel, search, bounds.at(table.kernel));
    EXPECT_LT(search.median_ratio, random.median_ratio) << table.kernel;
  }
}

// The search's other model (model=gp: a Gaussian process ranked by expected improvement, each
// exploring round picked one at a time by a kriging believer) on the recorded tables, seeds
// 0-49: the same budget, median within 1.005x, at least 48 of 50 seeds within 1.05x and at
// most two fewer than the default model on any table (today 49 / 48 / 49 on layer norm, matmul
// and split-K, against 50 / 50 / 45), no seed beyond today's worst: layer norm 1.054x, matmul
// 1.066x, split-K 1.252x (one seed; 1.000x before session 17's first round left out more
// compiles, but over seeds 0-299 1.252x before and after, 282 and 285 of 300 within 1.05x). Its length
// scale is fitted to each tuning's measured times: no constant of it was chosen on these
// tables. docs/strategies.md has the numbers, over 100 seeds too.
TEST(ReplayQuality, TheGaussianProcessModelOnEveryRecordedTable) {
  const std::map<std::string, double> gp_worst = {
      {"layer_norm_fp16_32768x4096", 1.06}, {"matmul_fp16_3072", 1.07}, {"split_k_fp16_128x8192x8192", 1.26}};
  for (const ReplayTable& table : recorded_tables(true)) {
    const Quality gp = quality(table, "search", {{"model", "gp"}});
    const Quality tpe = quality(table, "search");
    std::cout << table.kernel << ": model=gp median x" << gp.median_ratio << " worst x"
              << gp.worst_ratio << ", " << gp.within_1_05 << " of " << kQualitySeeds
              << " within 1.05x (default model: " << tpe.within_1_05 << ")\n";
    EXPECT_LE(gp.most_measured, 0.05) << table.kernel;
    EXPECT_LE(gp.most_compiled, 0.08) << table.kernel;
    EXPECT_LE(gp.median_ratio, 1.005) << table.kernel;
    EXPECT_GE(gp.within_1_05, 48) << table.kernel;
    EXPECT_GE(gp.within_1_05, tpe.within_1_05 - 2) << table.kernel;
    EXPECT_LE(gp.worst_ratio, gp_worst.at(table.kernel)) << table.kernel;
  }
}

// Tables no constant of the search was chosen on before session 16 (recorded on an H200 on
// 2026-12-05: a causal flash-attention forward, an fp8 matmul, a row softmax), seeds 0-49,
// default options: what the search does on kernel families it was not tuned on (session 16's
// after_fastest and feasibility=auto were chosen leave-one-table-out: held out, each of these
// three chooses them on the other five tables, but the fp8 matmul, which chooses
// feasibility=near: 37 of 50 within 1.05x, median x1.0010). Today: attention median x1.0155,
// worst x1.064, 43 of 50 within 1.05x (44 before session 19's first round timed its patience
// from its first compile's end; over seeds 0-199 186 of 200 against 185) (its compiles take 1.8 s: it widens its rounds and
// measures up to 5%; its best basin, 64x64 tiles on 4 warps, is narrow; most seeds settle on
// the 128x128 one, 1.5-1.8% behind); fp8 matmul x1.0000, x1.106, 43 of 50 (before session 16:
// x1.0205, 33); softmax x1.0005, x1.025, 50 of 50. The bounds keep those figures from getting
// worse (issue 37's target, worst <= 1.05x on every table, is not met on the first two);
// model=gp does worse on the first two, which is why it is not the default.
// docs/strategies.md has the table.
TEST(ReplayQuality, SearchOnTablesItWasNotTunedOn) {
  const std::map<std::string, QualityBound> bounds = {
      {"attention_fp16_causal_2x16x4096x128", {1.02, 1.07, 43}},
      {"matmul_fp8_4096", {1.005, 1.11, 43}},
      {"softmax_fp16_16384x8192", {1.005, 1.03, 50}},
  };
  const std::vector<ReplayTable> tables = recorded_tables(false);
  ASSERT_EQ(tables.size(), bounds.size()) << "a held-out table without bounds, or one missing";
  for (const ReplayTable& table : tables) {
    const Quality search = quality(table, "search");
    const Quality random = quality(table, "random");
    print_quality(table.kernel, "search (held out)", search);
    expect_within(table.kernel, search, bounds.at(table.kernel));
    EXPECT_LT(search.median_ratio, random.median_ratio) << table.kernel;
  }
}

// Every recorded table replayed as one whose compiles take 2-3 s per config (each recorded
// compile time mapped onto that range, their order kept), a first call simulated on 16
// compile threads, seeds 0-49, default options. The search sees after its first round that
// compiles are slow and spreads the rest of its budget, grown from 4.5% to 5%, evenly over
// floor(12 s / c) wider rounds (each of at most the threads free), and as they take about as
// long as each other a round leaves out a compile still running once half its picks are
// compiled and it waited a quarter as long again, taking it in the first round after it
// compiled: the median first call is 12.7-14.8 s, issue 37's 15 s on every table (layer norm
// 14.8 s, matmul 13.7 s, split-K 13.7 s: 13.2 s before session 19's first round timed its
// patience from its first compile's end), against 12.6-15.1 s over up to 11 s / c rounds (session 16) and
// 19.3-24.0 s for the rounds of 4 before session 15. The choices are about as good: 270 of 300
// seeds within 1.05x against 267 (layer norm 49 against 50, its seed 4 at 1.055x; attention
// 45 against 43, matmul 50 against 48); over seeds 0-299 1,577 of 1,800 both. At most 5%
// measured and 8% compiled.
// The bounds keep these figures from getting worse. docs/strategies.md has the table.
TEST(ReplayQuality, SlowCompilesTakeFewerWiderRounds) {
  struct SlowBound {
    QualityBound quality;
    double first_call_s;
  };
  const std::map<std::string, SlowBound> bounds = {
      {"attention_fp16_causal_2x16x4096x128", {{1.02, 1.06, 45}, 13.0}},
      {"layer_norm_fp16_32768x4096", {{1.005, 1.06, 49}, 15.0}},
      {"matmul_fp16_3072", {{1.005, 1.04, 50}, 14.0}},
      {"matmul_fp8_4096", {{1.005, 1.11, 40}, 13.0}},
      {"softmax_fp16_16384x8192", {{1.005, 1.03, 50}, 13.0}},
      {"split_k_fp16_128x8192x8192", {{1.005, 1.26, 36}, 14.0}},
  };
  const std::vector<ReplayTable> tables = recorded_tables();
  ASSERT_EQ(tables.size(), bounds.size()) << "a recorded table without bounds, or one missing";
  WallClock slow;
  slow.compile_min_s = 2.0;
  slow.compile_max_s = 3.0;
  for (const ReplayTable& table : tables) {
    const Quality search = quality(table, "search", {}, slow);
    print_quality(table.kernel, "search, 2-3 s compiles", search);
    std::cout << table.kernel << ": first call median " << search.median_first_call_s << " s\n";
    const SlowBound& bound = bounds.at(table.kernel);
    expect_within(table.kernel, search, bound.quality);
    EXPECT_LE(search.median_first_call_s, bound.first_call_s) << table.kernel;
  }
}

/// bench/python/pipeline_bench.py's 384-config matmul space, as bench/replay/pipeline_slice.py
/// writes it: the recorded fp16 matmul's GROUP_M 8 configs, ordered by BLOCK_M, BLOCK_N,
/// BLOCK_K, num_stages and num_warps.
ReplayTable pipeline_slice() {
  ReplayTable table = read_replay_table(std::string(DISTTUNE_REPLAY_TABLES) + "/matmul_fp16_3072.json");
  const auto knobs = [](const ReplayEntry& entry) {
    const Value config = Value::parse(entry.config).at("cfg").at("$triton.Config");
    const Value& kwargs = config.at("kwargs");
    return std::vector<int>{kwargs.at("GROUP_M"), kwargs.at("BLOCK_M"), kwargs.at("BLOCK_N"),
                            kwargs.at("BLOCK_K"), config.at("num_stages"), config.at("num_warps")};
  };
  std::erase_if(table.entries, [&](const ReplayEntry& entry) { return knobs(entry).front() != 8; });
  std::stable_sort(table.entries.begin(), table.entries.end(),
                   [&](const ReplayEntry& a, const ReplayEntry& b) { return knobs(a) < knobs(b); });
  table.kernel = "matmul_fp16_3072_pipeline_bench_384";
  return table;
}

// bench/python/pipeline_bench.py's 384-config matmul (issue 37: on one H200 its first call
// with the search must take at most 8 s at seeds 0-4, within 1% of the best), replayed. Since
// session 20 the default effort measures its fewest, 45 (it was 24), in rounds of 12 (it was
// 4): over seeds 0-49 the median first call is 6.36 s (6.10 s) and 49 of 50 seeds are within
// 1.05x (33; on an H100 seeds 2, 4, 5 and 8 of 0-9 had chosen 11-33% slower than the best).
// Before that, its compiles take 0.5-6 s
// (median 0.8 s), and at seed 0 the first round waited 3 s for one of 5 s, which the second
// round waited for again. The first round now leaves out a compile still running once half
// its picks compiled and it waited 4 times as long again as since its first compile ended,
// and a later round takes it once it has compiled: seeds 0-4 simulate 6.2, 6.8, 6.9, 5.9 and
// 7.7 s (session 17, a patience of 1.5 times the wait since the round began: 6.6-6.9 s for
// seeds 0-3 and 8.8 s for seed 4; before that 8.9, 6.7, 6.9, 8.6 and 9.1 s); over seeds 0-49
// the median is 6.10 s (6.42 s; 6.58 s), 33 of 50 within 1.05x (33). On the simulated clock.
// With a compiler set-up of 1 s in the process (WallClock::compile_setup_s), which every
// compile of the first wave waits for, the median grows by the set-up alone: the patience
// does not multiply it (timed from the round's start, it grew by 1.3 s), and the compile
// times the search is told are the compiles' own (before the Python front ends timed a
// compile from after the set-up, it told the first wave's with the set-up in them, and the
// search shaped its rounds by them: over seeds 0-199, 38 attention seeds beyond 1.05x
// instead of 14).
TEST(ReplayWallClock, TheMatmulSliceOfThePipelineBench) {
  const ReplayTable slice = pipeline_slice();
  ASSERT_EQ(slice.entries.size(), 384u);
  Measurement m;
  m.strategy = "search";
  for (std::uint64_t seed = 0; seed < 5; ++seed) EXPECT_LE(replay_tuning(slice, m, seed).wall_s, 8.0) << seed;
  const Quality search = quality(slice, "search");
  std::cout << slice.kernel << ": first call median " << search.median_first_call_s << " s, "
            << search.within_1_05 << " of " << kQualitySeeds << " within 1.05x\n";
  EXPECT_LE(search.median_first_call_s, 6.4);
  EXPECT_GE(search.within_1_05, 49);
  WallClock setup;
  setup.compile_setup_s = 1.0;
  const Quality set_up = quality(slice, "search", {}, setup);
  std::cout << slice.kernel << ": with a 1 s compiler set-up, first call median " << set_up.median_first_call_s << " s\n";
  EXPECT_NEAR(set_up.median_first_call_s, search.median_first_call_s + 1.0, 1e-9);
  EXPECT_EQ(set_up.within_1_05, search.within_1_05);
}

// The pipeline bench's own space (384 configs, the fp16 matmul at 4096^3) as its oracle measured
// it live on an H100 (tests/data/replay/live, session 22: gpu_check part 5, five interleaved
// rounds, no L2 flush; two configs within 1% of the best, four within 5%). Live, the search
// chose within 1% at 6 of seeds 0-9 (regret 0, 11.3, 10.7, 0, 0.5, 11.3, 0, 0, 0.5, 6.9%); the
// replay of those seeds on the live table chooses the live run's config at 7 of them (0-3, 5,
// 6, 8) and is within 1% at 6: the live misses are the search's, not the live noise.
// Over seeds 0-49 the default is within 1% at 25 (worst 1.240x) and effort=thorough at 49
// (worst 1.036x), for a simulated first call of 8.7 s median against 4.7 s.
TEST(ReplayQuality, ThePipelineBenchSpaceAsMeasuredLive) {
  const ReplayTable live =
      read_replay_table(std::string(DISTTUNE_REPLAY_TABLES) + "/live/pipeline_bench_384_4096_h100.json");
  ASSERT_EQ(live.entries.size(), 384u);
  const std::size_t live_choices[] = {275, 254, 255, 275, 277, 254, 275, 275, 277, 343};
  Measurement m;
  m.strategy = "search";
  int same = 0;
  for (std::uint64_t seed = 0; seed < std::size(live_choices); ++seed)
    same += replay_tuning(live, m, seed).chosen == live_choices[seed] ? 1 : 0;
  EXPECT_GE(same, 7);
  const int by_default = quality(live, "search").within_1_01;
  const int by_thorough = quality(live, "search", {{"effort", "thorough"}}).within_1_01;
  std::cout << live.kernel << ": " << same << " of 10 live choices replayed; within 1.01x at " << by_default
            << " of " << kQualitySeeds << " seeds, effort=thorough " << by_thorough << '\n';
  EXPECT_GE(by_default, 25);
  EXPECT_GE(by_thorough, 49);
}

// The search with feasibility=forest (the chance to run half from a forest of which configs
// ran, session 15) on every recorded table, tuned-on and held-out alike (no constant of it was
// chosen on any single table: its share, 0.5, was the best of 0.3, 0.5 and 0.7 over all six),
// seeds 0-49: the same budget, and each table's median, worst seed and seeds within 1.05x held
// at today's (against the default, feasibility=auto: attention 43 against 44, layer norm
// 50 / 50, matmul 49 against 50, fp8 matmul 43 / 43, softmax 50 / 50, split-K 41 against 45
// (43 before session 17's first round left out more compiles; over seeds 0-299 229 of 300
// against 230 before); worst: attention 1.065x against 1.064x, matmul 1.066x against 1.033x,
// split-K 1.237x against 1.213x, which is why it is an option, not the default). docs/strategies.md has the
// numbers. About 22 s on one core (dev build).
TEST(ReplayQuality, TheForestFeasibilityOnEveryRecordedTable) {
  const std::map<std::string, QualityBound> bounds = {
      {"attention_fp16_causal_2x16x4096x128", {1.02, 1.07, 43}}, {"layer_norm_fp16_32768x4096", {1.005, 1.04, 50}},
      {"matmul_fp16_3072", {1.005, 1.07, 49}},                    {"matmul_fp8_4096", {1.005, 1.11, 43}},
      {"softmax_fp16_16384x8192", {1.005, 1.03, 50}},             {"split_k_fp16_128x8192x8192", {1.005, 1.24, 41}},
  };
  const std::vector<ReplayTable> tables = recorded_tables();
  ASSERT_EQ(tables.size(), bounds.size()) << "a recorded table without bounds, or one missing";
  for (const ReplayTable& table : tables) {
    const Quality forest = quality(table, "search", {{"feasibility", "forest"}});
    print_quality(table.kernel, "feasibility=forest", forest);
    expect_within(table.kernel, forest, bounds.at(table.kernel));
  }
}

// feasibility=near (the near vote alone, the default before session 16, when the forest only
// once a fifth of the measured configs failed, feasibility=auto, became it) on every recorded
// table, seeds 0-49: the default's figures where few configs fail; on the fp8 matmul (46% of
// it fails) 36 of 50 within 1.05x, median x1.0010, against auto's 43 and x1.0000; softmax
// (25% fails) worst x1.023 (auto's x1.025), 50 of 50. Attention 43 and fp8 36 (44 and 37
// before session 19's first round timed its patience from its first compile's end: one seed
// each). About 16 s on one core (dev build).
TEST(ReplayQuality, TheNearFeasibilityOnEveryRecordedTable) {
  const std::map<std::string, QualityBound> bounds = {
      {"attention_fp16_causal_2x16x4096x128", {1.02, 1.07, 43}}, {"layer_norm_fp16_32768x4096", {1.005, 1.04, 50}},
      {"matmul_fp16_3072", {1.005, 1.04, 50}},                    {"matmul_fp8_4096", {1.005, 1.11, 36}},
      {"softmax_fp16_16384x8192", {1.005, 1.03, 50}},             {"split_k_fp16_128x8192x8192", {1.005, 1.22, 45}},
  };
  const std::vector<ReplayTable> tables = recorded_tables();
  ASSERT_EQ(tables.size(), bounds.size()) << "a recorded table without bounds, or one missing";
  for (const ReplayTable& table : tables) {
    const Quality near = quality(table, "search", {{"feasibility", "near"}});
    print_quality(table.kernel, "feasibility=near", near);
    expect_within(table.kernel, near, bounds.at(table.kernel));
  }
}

/// The 16 matmul buckets of bench/python/many_shapes.py, M = 16 .. 8192.
constexpr int kBucketSizes[] = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 3072, 4096, 8192};

ReplayTable bucket(int m) {
  return read_replay_table(std::string(DISTTUNE_REPLAY_TABLES) + "/buckets/matmul_bucket_m" + std::to_string(m) +
                           ".json");
}

// The search on the recorded buckets (384 configs each), which none of its constants was
// chosen on: seeds 0-49, 45 configs measured (11.7%, the default effort's fewest; session 20,
// chosen on these with the pipeline bench's slice, docs/strategies.md "Small spaces"). Today
// the median is within 1.02x on 15 of 16 (M = 768: 1.050x), the worst seed 1.01-1.13x, and
// every median below random's (1.02-1.11x). With 24 measured: 14 of 16, worst 1.08-1.23x.
// docs/strategies.md has the table.
TEST(ReplayQuality, SearchOnTheRecordedBucketsItWasNotTunedOn) {
  int within = 0;
  for (const int m : kBucketSizes) {
    const ReplayTable table = bucket(m);
    const Quality search = quality(table, "search");
    const Quality random = quality(table, "random");
    std::cout << table.kernel << ": search median x" << search.median_ratio << " worst x" << search.worst_ratio
              << "; random median x" << random.median_ratio << '\n';
    EXPECT_LE(search.median_ratio, 1.06) << table.kernel;
    EXPECT_LE(search.worst_ratio, 1.14) << table.kernel;
    EXPECT_LT(search.median_ratio, random.median_ratio) << table.kernel;
    within += search.median_ratio <= 1.02 ? 1 : 0;
  }
  EXPECT_GE(within, 15);
}

// A small space (384 configs: 4.5% is 18, the default's fewest 45) takes its exploring rounds
// a quarter of the fewest wide (12) where the compile threads allow: the same 45 measured in
// fewer rounds than with 4 threads, where its rounds stay 4 wide (session 20). Seeds 0-9.
TEST(ReplayQuality, SmallSpacesTakeWideRoundsWhereThreadsAllow) {
  const ReplayTable table = bucket(256);
  Measurement m;
  m.strategy = "search";
  WallClock sixteen, four;
  four.compile_threads = 4;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const ReplayRun wide = replay_tuning(table, m, seed, sixteen);
    const ReplayRun narrow = replay_tuning(table, m, seed, four);
    EXPECT_GE(wide.measured, 45u) << seed;
    EXPECT_GE(narrow.measured, 45u) << seed;
    EXPECT_LT(wide.rounds + 4, narrow.rounds) << seed;
  }
}

// feasibility=forest on the recorded buckets (few of whose configs fail, 4 of 384), seeds
// 0-49: the median within 1.02x on 15 of 16 as the default's (M = 768: 1.051x), the worst
// seed 1.01-1.13x, every median below random's. About 8 s.
TEST(ReplayQuality, TheForestFeasibilityOnTheRecordedBuckets) {
  int within = 0;
  for (const int m : kBucketSizes) {
    const ReplayTable table = bucket(m);
    const Quality forest = quality(table, "search", {{"feasibility", "forest"}});
    const Quality random = quality(table, "random");
    print_quality(table.kernel, "feasibility=forest", forest);
    EXPECT_LE(forest.median_ratio, 1.06) << table.kernel;
    EXPECT_LE(forest.worst_ratio, 1.14) << table.kernel;
    EXPECT_LT(forest.median_ratio, random.median_ratio) << table.kernel;
    within += forest.median_ratio <= 1.02 ? 1 : 0;
  }
  EXPECT_GE(within, 15);
}

// Speculative compiles (the search's ahead(), issue 37) are bounded: named ahead and never
// measured, at most 0.6 of the budget whatever ahead_rounds (so at most 7.2% of the space at
// the default 4.5%, 8% where slow compiles widen the rounds, or a fastest found late grows
// the budget, to 5%, with ahead_rounds 64 too); with ahead_rounds 0 a first call compiles
// only what it measures. The budget measured stays within 5% of the space (which compiles
// are ready when changes a round's picks, and so when its fastest is found). Seeds 0-9.
TEST(ReplayQuality, SpeculativeCompilesAreBounded) {
  for (const ReplayTable& table : recorded_tables()) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      Measurement m;
      m.strategy = "search";
      const ReplayRun usual = replay_tuning(table, m, seed);
      m.strategy_options["ahead_rounds"] = std::string("0");
      const ReplayRun none = replay_tuning(table, m, seed);
      m.strategy_options["ahead_rounds"] = std::string("64");
      const ReplayRun most = replay_tuning(table, m, seed);
      for (const ReplayRun* run : {&usual, &none, &most}) {
        const double space = static_cast<double>(table.entries.size());
        EXPECT_LE(static_cast<double>(run->measured), 0.05 * space) << table.kernel << " seed " << seed;
        EXPECT_LE(static_cast<double>(run->compiled), 1.6 * static_cast<double>(run->measured) + 1.0)
            << table.kernel << " seed " << seed;
      }
      EXPECT_EQ(none.compiled, none.measured) << table.kernel << " seed " << seed;
    }
  }
}

/// A 12-block table recorded at size m: block b takes 1 + |b - best| / 10 ms, and compiles in `compile_s`.
ReplayTable sized_table(int m, int best, double compile_s) {
  Value entries = Value::array();
  for (int block = 0; block < 12; ++block) {
    entries.push_back(timed_entry(block, 1.0 + 0.1 * std::abs(block - best), compile_s));
  }
  return parse_replay_table(table_text(entries, 1, Value{{"M", m}}), "m" + std::to_string(m) + ".json");
}

TEST(ReplaySweep, EachKeyStartsFromTheKeysBeforeItAndSharedBinariesCompileOnce) {
  const std::vector<ReplayTable> tables{sized_table(16, 2, 1.0), sized_table(32, 3, 1.0), sized_table(4096, 9, 1.0)};
  Measurement m;
  m.strategy = "exhaustive";
  const std::vector<SweepKeyRun> warm = replay_sweep(tables, m, 0, {}, SweepCompiles::shared, true);
  ASSERT_EQ(warm.size(), 3u);
  EXPECT_EQ(warm[0].key, R"({"M":16})");
  EXPECT_TRUE(warm[0].from_keys.empty());
  EXPECT_EQ(warm[1].from_keys, std::vector<std::string>{R"({"M":16})"});
  EXPECT_EQ(warm[2].from_keys, (std::vector<std::string>{R"({"M":32})", R"({"M":16})"}));
  EXPECT_EQ(warm[0].run.measured, 12u);  // nothing to start from: the whole space
  for (const SweepKeyRun& key : warm) EXPECT_DOUBLE_EQ(key.run.ratio, 1.0) << key.key;
  EXPECT_GT(warm[0].run.compile_wait_s, 0.0);
  EXPECT_DOUBLE_EQ(warm[1].run.compile_wait_s, 0.0);  // the first key compiled every block

  const std::vector<SweepKeyRun> alone = replay_sweep(tables, m, 0, {}, SweepCompiles::per_key, false);
  for (const SweepKeyRun& key : alone) {
    EXPECT_TRUE(key.from_keys.empty());
    EXPECT_EQ(key.run.measured, 12u);
    EXPECT_GT(key.run.compile_wait_s, 0.0);  // every key compiles what it runs
  }
}

TEST(ReplaySweep, RefusesTablesOfAnotherSpaceOrARepeatedKey) {
  Measurement m;
  const auto refusal = [&](const std::vector<ReplayTable>& tables) {
    try {
      (void)replay_sweep(tables, m, 0, {}, SweepCompiles::per_key, true);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_NE(refusal({sized_table(16, 2, 1.0), sized_table(16, 3, 1.0)}).find("two tables have the problem"),
            std::string::npos);
  const ReplayTable other = parse_replay_table(table_text(Value::array({ok_entry(1, {1.0})}), 1, Value{{"M", 8}}), "o");
  EXPECT_NE(refusal({sized_table(16, 2, 1.0), other}).find("has not the configs of"), std::string::npos);
  EXPECT_NE(refusal({}).find("at least one table"), std::string::npos);
}

// The 16 matmul buckets of bench/python/many_shapes.py (tests/data/replay/buckets, recorded on
// an H200 with sizes as run-time arguments), swept in order by converge, seeds 0-9. The
// warm start keeps each bucket that many_shapes.py checks within 2% of its best in at least
// 9 of 10 seeds (today 10 of 10 but M = 64: 9), at most a third of the independent
// tunings' simulated wall time with compiles per key (today x0.25). docs/many-shapes.md and
// BENCHMARKS.md have the figures. Deterministic given the seed: no wall clock.
TEST(ReplayQuality, AWarmStartedSweepOverTheRecordedBuckets) {
  std::vector<ReplayTable> tables;
  for (const int m : kBucketSizes) tables.push_back(bucket(m));
  Measurement m;
  m.strategy = "converge";
  std::vector<int> within(tables.size(), 0);
  double warm_s = 0.0;
  double alone_s = 0.0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const std::vector<SweepKeyRun> warm = replay_sweep(tables, m, seed, {}, SweepCompiles::per_key, true);
    const std::vector<SweepKeyRun> alone = replay_sweep(tables, m, seed, {}, SweepCompiles::per_key, false);
    for (std::size_t k = 0; k < tables.size(); ++k) {
      within[k] += warm[k].run.chosen && warm[k].run.ratio <= 1.02 ? 1 : 0;
      warm_s += warm[k].run.wall_s;
      alone_s += alone[k].run.wall_s;
    }
  }
  for (std::size_t k = 0; k < tables.size(); ++k) std::cout << tables[k].problem << ": " << within[k] << "/10\n";
  std::cout << "warm-started over independent wall: x" << warm_s / alone_s << '\n';
  for (const std::size_t checked : {0, 3, 6, 9, 12, 15}) {  // M = 16, 64, 192, 512, 2048, 8192
    EXPECT_GE(within[checked], 9) << tables[checked].problem;
  }
  EXPECT_LE(warm_s / alone_s, 1.0 / 3.0);
}

}  // namespace
}  // namespace disttune
