// The engine's multi-rank protocol end to end, through Autotuned over the MPI communicator:
// rank-dependent costs, divergent pruning, failures on one rank, records on some ranks.
// Each run takes what the cost model says (SaidTimer), so no choice depends on the load.
#include <mpi.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/autotune.hpp"
#include "disttune/mpi.hpp"
#include "mpi_test_support.hpp"
#include "said_timer.hpp"  // tests/unit

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::SaidTimer;
using test::gather_ints;
using test::world_rank;
using test::world_size;

struct RankConfig {
  int id = 0;
};
Value describe(const RankConfig& config) { return Value{{"id", config.id}}; }

using Tuned = Autotuned<RankConfig, int, int(int)>;
/// Milliseconds one run of `config` takes for `key` on `rank`.
using CostModel = std::function<double(int config, int key, int rank)>;

/// Forwards to another communicator but pretends that nodes hold `ranks_per_node` ranks each,
/// so that one machine can show the one-writer-per-node rule across several "nodes".
class PretendNodes final : public Communicator {
 public:
  PretendNodes(std::shared_ptr<Communicator> inner, int ranks_per_node)
      : inner_(std::move(inner)), ranks_per_node_(ranks_per_node) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  int local_rank() const override { return inner_->rank() % ranks_per_node_; }
  void barrier(const CollectiveContext& context) override { inner_->barrier(context); }
  void all_reduce_max(std::span<double> values, const CollectiveContext& context) override {
    inner_->all_reduce_max(values, context);
  }
  std::vector<std::string> all_gather(const std::string& bytes,
                                      const CollectiveContext& context) override {
    return inner_->all_gather(bytes, context);
  }

 private:
  std::shared_ptr<Communicator> inner_;
  int ranks_per_node_;
};

class MpiTuning : public ::testing::Test {
 protected:
  /// A tuned function of three configs whose runs take what `cost` says; launches are counted.
  Tuned make(const CostModel& cost, std::shared_ptr<Communicator> comm, const fs::path& root,
             std::function<bool(const RankConfig&, const int&)> prune = {},
             std::function<bool(int config)> fails_here = {},
             std::optional<std::map<std::string, std::string>> converge_options = std::nullopt) {
    Tuned::Spec spec;
    spec.identity = {"rank_costs", "test-v1"};
    spec.configs = {RankConfig{0}, RankConfig{1}, RankConfig{2}};
    spec.key = [](const int& key) { return key; };
    spec.prune = std::move(prune);
    spec.launch = [this, cost, fails_here, rank = world_rank()](const RankConfig& config, int key) {
      ++launches_;
      if (fails_here && fails_here(config.id)) {
        throw std::runtime_error("config " + std::to_string(config.id) + " is broken on rank " +
                                 std::to_string(rank));
      }
      timer_->said_ms = cost(config.id, key, rank);
      return config.id;
    };
    spec.options.measurement.warmup_runs = 1;
    spec.options.measurement.timed_runs = 5;
    spec.options.measurement.strategy = converge_options ? "converge" : "exhaustive";
    if (converge_options) spec.options.measurement.strategy_options = *converge_options;
    spec.options.communicator = std::move(comm);
    spec.options.cache_root = root;
    spec.options.timer = timer_;
    return Tuned(std::move(spec));
  }

  std::shared_ptr<Communicator> world_ = make_mpi_communicator();
  test::SharedTempDir dir_;
  std::atomic<int> launches_{0};
  std::shared_ptr<SaidTimer> timer_ = std::make_shared<SaidTimer>();
};

TEST_F(MpiTuning, TheSlowestRankDecidesAConfigsTime) {
  // Config 0 is fastest on rank 0 only, config 2 fastest on the others only: both lose to
  // config 1, which is never the fastest anywhere but never slow either.
  Tuned tuned = make(
      [](int config, int, int rank) {
        if (config == 1) return 5.0;
        const bool fast_here = (config == 0) == (rank == 0);
        return fast_here ? 1.0 : 25.0;
      },
      world_, dir_.path());
  EXPECT_EQ(tuned(7), 1);
  const auto report = tuned.last_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->best, 1u);
  EXPECT_EQ(report->source, TuningReport::Source::tuned);
  EXPECT_GE(report->candidates[0].agreed_ms, 25.0);  // another rank's time, not this one's
  EXPECT_GE(report->candidates[2].agreed_ms, 25.0);
  if (world_rank() == 0) {
    EXPECT_LT(report->candidates[0].local_ms, 5.0);
  }
  for (int choice : gather_ints(static_cast<int>(report->best))) EXPECT_EQ(choice, 1);
}

TEST_F(MpiTuning, PruningThatDependsOnTheRankIsAnErrorOnEveryRank) {
  Tuned tuned = make([](int, int, int) { return 1.0; }, world_, dir_.path(),
                     [rank = world_rank()](const RankConfig& config, const int&) {
                       return !(rank == 1 && config.id == 2);
                     });
  try {
    tuned(3);
    ADD_FAILURE() << "rank " << world_rank() << " tuned although rank 1 pruned differently";
  } catch (const RankDisagreement& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("rank 1"), std::string::npos) << what;
    EXPECT_NE(what.find("rank_costs"), std::string::npos) << what;
  }
  EXPECT_EQ(launches_.load(), 0) << "a config ran before the ranks agreed on the list";
  // No rank is left inside a collective: the communicator still works for all.
  std::array<double, 1> value{1.0};
  world_->all_reduce_max(value, test::test_context("after the disagreement"));
}

TEST_F(MpiTuning, StrategyOptionsOfTheSameValueAgreeHoweverEachRankWritesThem) {
  // Rank 0 writes converge's default noise bound, rank 1 writes it otherwise, the others
  // leave it out: every rank's converge reads 0.005, so they tune together.
  std::map<std::string, std::string> options;
  if (world_rank() == 0) options = {{"max_noise", "0.005"}, {"seed", "0"}};
  if (world_rank() == 1) options = {{"max_noise", "5e-3"}, {"min_time_ms", "0.50"}};
  Tuned tuned = make([](int config, int, int) { return config == 2 ? 1.0 : 3.0; }, world_, dir_.path(), {}, {},
                     options);
  EXPECT_EQ(tuned(4), 2);
  for (int choice : gather_ints(static_cast<int>(tuned.last_report()->best))) EXPECT_EQ(choice, 2);
}

TEST_F(MpiTuning, AStrategyOptionOfAnotherValueIsRefusedOnEveryRankNamingIt) {
  const std::map<std::string, std::string> options =
      world_rank() == 1 ? std::map<std::string, std::string>{{"max_noise", "0.01"}}
                        : std::map<std::string, std::string>{};
  Tuned tuned = make([](int, int, int) { return 1.0; }, world_, dir_.path(), {}, {}, options);
  try {
    tuned(5);
    ADD_FAILURE() << "rank " << world_rank() << " tuned although rank 1 asked for another max_noise";
  } catch (const RankDisagreement& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find(R"(rank 1 differs from rank 0 in measurement.strategy_options.max_noise: "0.01" vs "0.005")"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(launches_.load(), 0) << "a config ran before the ranks agreed on the settings";
}

TEST_F(MpiTuning, AConfigThatFailsOnOneRankIsFailedOnAll) {
  const int broken_on = world_size() - 1;
  Tuned tuned = make([](int config, int, int) { return config == 0 ? 1.0 : config == 1 ? 4.0 : 25.0; },
                     world_, dir_.path(), {},
                     [broken_on](int config) { return config == 0 && world_rank() == broken_on; });
  EXPECT_EQ(tuned(5), 1);
  const auto report = tuned.last_report();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->candidates[0].failed) << "rank " << world_rank();
  EXPECT_FALSE(report->candidates[1].failed);
  if (world_rank() == broken_on) {
    EXPECT_NE(report->candidates[0].error.find("is broken on rank"), std::string::npos);
  }
  for (int choice : gather_ints(static_cast<int>(report->best))) EXPECT_EQ(choice, 1);
}

TEST_F(MpiTuning, ARecordOnOneRankOnlyMakesEveryRankTune) {
  const fs::path own_root = dir_.path() / ("rank" + std::to_string(world_rank()));
  if (world_rank() == 0) {
    // Alone, rank 0 tunes with costs that make config 2 best and stores that choice.
    Tuned alone = make([](int config, int, int) { return config == 2 ? 1.0 : 15.0; },
                       std::make_shared<SingleProcessCommunicator>(), own_root);
    EXPECT_EQ(alone(11), 2);
    ASSERT_TRUE(alone.last_report() && alone.last_report()->record_path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Now config 1 is best. Rank 0 holds a record (config 2), the others none: all must tune.
  Tuned together = make([](int config, int, int) { return config == 1 ? 1.0 : 15.0; }, world_,
                        own_root);
  EXPECT_EQ(together(11), 1);
  const auto report = together.last_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->source, TuningReport::Source::tuned) << "rank " << world_rank();
  for (int choice : gather_ints(static_cast<int>(report->best))) EXPECT_EQ(choice, 1);
}

TEST_F(MpiTuning, ARecordOnEveryRankIsLoadedWithoutTuning) {
  const CostModel cost = [](int config, int, int) { return config == 2 ? 1.0 : 15.0; };
  {
    Tuned first = make(cost, world_, dir_.path());
    EXPECT_EQ(first(13), 2);
  }
  launches_ = 0;
  Tuned second = make(cost, world_, dir_.path());
  EXPECT_EQ(second(13), 2);
  const auto report = second.last_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(source_name(*report), "disk") << "rank " << world_rank();
  EXPECT_EQ(launches_.load(), 1) << "only the final run with the stored choice";
}

TEST_F(MpiTuning, AGrownSpaceMeasuresTheStoredBestWithTheNewConfigOnEveryRank) {
  const CostModel cost = [](int config, int, int) {
    return config == 2 ? 1.0 : config == 1 ? 8.0 : 20.0;
  };
  {
    // Config 2 pruned away: config 1 is best and stored.
    Tuned first = make(cost, world_, dir_.path(),
                       [](const RankConfig& config, const int&) { return config.id != 2; });
    EXPECT_EQ(first(17), 1);
  }
  launches_ = 0;
  Tuned grown = make(cost, world_, dir_.path());
  EXPECT_EQ(grown(17), 2);
  const auto report = grown.last_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->source, TuningReport::Source::tuned) << "rank " << world_rank();
  // Configs 1 and 2, warm-up 1 + timed 5 each, then the final run: config 0 never ran.
  EXPECT_EQ(launches_.load(), 13) << "rank " << world_rank();
  for (int choice : gather_ints(static_cast<int>(report->best))) EXPECT_EQ(choice, 2);
}

/// Records (not logs or moved-aside files) in a function directory.
int count_records(const fs::path& function_dir) {
  int records = 0;
  if (!fs::exists(function_dir)) return 0;
  for (const auto& entry : fs::directory_iterator(function_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == 64 + 5 && name.ends_with(".json")) ++records;
  }
  return records;
}

TEST_F(MpiTuning, OnlyLocalRankZeroWritesTheRecordAndEachRankHasItsOwnLog) {
  Tuned tuned = make([](int config, int, int) { return config == 0 ? 1.0 : 15.0; }, world_,
                     dir_.path());
  EXPECT_EQ(tuned(17), 0);
  const auto report = tuned.last_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->record_path.has_value(), world_rank() == 0) << "rank " << world_rank();
  ASSERT_TRUE(report->log_path);
  EXPECT_TRUE(report->log_path->filename().string().ends_with("-rank" + std::to_string(world_rank())))
      << *report->log_path;
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(count_records(dir_.path() / "rank_costs"), 1);
  int logs = 0;
  for (const auto& entry : fs::directory_iterator(dir_.path() / "rank_costs")) {
    if (entry.path().filename().string().find(".log-") != std::string::npos) ++logs;
  }
  EXPECT_EQ(logs, world_size());
  const std::vector<int> writers = gather_ints(report->record_path ? 1 : 0);
  EXPECT_EQ(std::count(writers.begin(), writers.end(), 1), 1);
}

TEST_F(MpiTuning, OneWriterPerNode) {
  // Two ranks per pretend node, each node with its own disk.
  const int node = world_rank() / 2;
  const fs::path node_root = dir_.path() / ("node" + std::to_string(node));
  Tuned tuned = make([](int config, int, int) { return config == 0 ? 1.0 : 15.0; },
                     std::make_shared<PretendNodes>(world_, 2), node_root);
  EXPECT_EQ(tuned(19), 0);
  const auto report = tuned.last_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->record_path.has_value(), world_rank() % 2 == 0) << "rank " << world_rank();
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(count_records(node_root / "rank_costs"), 1) << "node " << node;
  const std::vector<int> writers = gather_ints(report->record_path ? 1 : 0);
  EXPECT_EQ(std::count(writers.begin(), writers.end(), 1), (world_size() + 1) / 2);
}

TEST_F(MpiTuning, SeveralKeysInARowEachGetTheirOwnAgreedChoice) {
  // For key k, config k%3 takes 2 ms everywhere; config (k+1)%3 is 0.5 ms on the last rank
  // but 20 ms elsewhere; the third takes 12 ms. The agreed best is always k%3.
  const int last = world_size() - 1;
  Tuned tuned = make(
      [last](int config, int key, int rank) {
        if (config == key % 3) return 2.0;
        if (config == (key + 1) % 3) return rank == last ? 0.5 : 20.0;
        return 12.0;
      },
      world_, dir_.path());
  for (int key = 0; key < 4; ++key) {
    EXPECT_EQ(tuned(key), key % 3) << "key " << key;
    for (int choice : gather_ints(tuned(key))) EXPECT_EQ(choice, key % 3) << "key " << key;
  }
  for (int key = 0; key < 4; ++key) {
    ASSERT_TRUE(tuned.cached_choice(key)) << "key " << key;
    EXPECT_EQ(*tuned.cached_choice(key), static_cast<std::size_t>(key % 3));
  }
}

}  // namespace
}  // namespace disttune
