// Rank-split tuning over MPI (mpirun -np 2, 3, 4): each rank runs only its share, all agree on one choice.
#include <mpi.h>

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/autotune.hpp"
#include "disttune/mpi.hpp"
#include "disttune/store.hpp"
#include "mpi_test_support.hpp"
#include "said_timer.hpp"  // tests/unit

namespace disttune {
namespace {

using test::gather_ints;
using test::world_rank;
using testing::SaidTimer;
using test::world_size;

struct Tile {
  int id = 0;
};
Value describe(const Tile& tile) { return Value{{"id", tile.id}}; }

using Tuned = Autotuned<Tile, int, int(int)>;

/// Milliseconds a run of each config takes: config 2 is the fastest, then 4.
constexpr double kCostMs[] = {6.0, 5.0, 1.0, 4.0, 3.0};

class MpiRankSplit : public ::testing::Test {
 protected:
  Tuned make(std::function<bool(int config)> fails_here = {}) {
    Tuned::Spec spec;
    spec.identity = {"split_costs", "test-v1"};
    spec.configs = {Tile{0}, Tile{1}, Tile{2}, Tile{3}, Tile{4}};
    spec.key = [](const int& key) { return key; };
    spec.launch = [this, fails_here](const Tile& tile, int) {
      ++runs_[static_cast<std::size_t>(tile.id)];
      if (fails_here && fails_here(tile.id)) throw std::runtime_error("tile " + std::to_string(tile.id) + " broke");
      timer_->said_ms = kCostMs[tile.id];
      return tile.id;
    };
    spec.options.measurement.strategy = "exhaustive";  // the run counts below are its
    spec.options.measurement.warmup_runs = 1;
    spec.options.measurement.timed_runs = 3;
    spec.options.communicator = make_mpi_communicator();
    spec.options.cache_root = dir_.path();
    spec.options.split_across_ranks = true;
    spec.options.timer = timer_;
    return Tuned(std::move(spec));
  }

  std::vector<std::atomic<int>> runs_ = std::vector<std::atomic<int>>(5);
  std::shared_ptr<SaidTimer> timer_ = std::make_shared<SaidTimer>();
  test::SharedTempDir dir_;
};

TEST_F(MpiRankSplit, EachRankRunsOnlyItsShareAndEveryRankTakesTheSameBest) {
  Tuned tuned = make();
  EXPECT_EQ(tuned(1), 2);  // the final call runs the best once
  const auto report = tuned.last_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->split_ranks, world_size());
  for (std::size_t i = 0; i < 5; ++i) {
    const bool mine = static_cast<int>(i % static_cast<std::size_t>(world_size())) == world_rank();
    const int final_run = i == 2 ? 1 : 0;
    EXPECT_EQ(runs_[i].load(), (mine ? 1 + 3 : 0) + final_run) << "rank " << world_rank() << " config " << i;
    EXPECT_TRUE(report->candidates[i].measured);
    EXPECT_DOUBLE_EQ(report->candidates[i].agreed_ms, kCostMs[i]);
  }
  for (int choice : gather_ints(static_cast<int>(report->best))) EXPECT_EQ(choice, 2);
  if (report->record_path) {
    const RecordRead read = read_record(*report->record_path);
    ASSERT_TRUE(read.record) << read.error;
    EXPECT_EQ(read.record->split_ranks, world_size());
  }
}

TEST_F(MpiRankSplit, AFailureOnItsRankIsKnownEverywhere) {
  // Config 2 breaks on the rank that measures it (rank 2 % size): every rank excludes it.
  const int owner = 2 % world_size();
  Tuned tuned = make([owner](int config) { return config == 2 && world_rank() == owner; });
  EXPECT_EQ(tuned(2), 4);
  const auto report = tuned.last_report();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->candidates[2].failed);
  EXPECT_EQ(report->candidates[2].error, "on rank " + std::to_string(owner) + ": tile 2 broke");
  for (int choice : gather_ints(static_cast<int>(report->best))) EXPECT_EQ(choice, 4);
}

}  // namespace
}  // namespace disttune
