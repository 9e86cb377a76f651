// Contextual tuning across ranks (is_dist): the MAX rule, agreement on failures, digest check.
// Each launch takes what the cost model says (SaidTimer), so no choice depends on the load.
#include <mpi.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/context.hpp"
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

struct Costed {
  int id = 0;
};
Value describe(const Costed& config) { return Value{{"id", config.id}}; }

using Kernel = TunableKernel<Costed, int, void(int)>;
/// Milliseconds one launch of `config` takes on `rank`; < 0 means it throws there.
using CostModel = std::function<double(int config, int rank)>;

class MpiContext : public ::testing::Test {
 protected:
  Kernel make(const std::string& name, int configs, CostModel cost) {
    Kernel::Spec spec;
    spec.name = name;
    for (int i = 0; i < configs; ++i) spec.configs.push_back({i});
    spec.key = [](const int& n) { return n; };
    spec.launch = [cost, timer = timer_](const Costed& config, int) {
      const double ms = cost(config.id, world_rank());
      if (ms < 0) throw std::runtime_error("config " + std::to_string(config.id) + " cannot run here");
      timer->said_ms = ms;
    };
    return Kernel(std::move(spec));
  }

  ContextOptions options() const {
    ContextOptions o;
    o.is_dist = true;
    o.n_warmup = 1;
    o.n_repeat = 2;
    o.statistic = Statistic::min;
    o.communicator = comm_;
    o.log_dir = logs_.path();
    o.timer = timer_;
    return o;
  }

  std::shared_ptr<Communicator> comm_ = make_mpi_communicator();
  std::shared_ptr<SaidTimer> timer_ = std::make_shared<SaidTimer>();
  test::SharedTempDir logs_;
};

TEST_F(MpiContext, TheSlowestRankDecidesAndEveryRankChoosesTheSame) {
  // Config 0 is slow on even ranks, config 1 on odd ranks: each rank alone would pick one
  // of them, the MAX over ranks picks config 2.
  Kernel gemm = make("gemm", 3, [](int config, int rank) {
    if (config == 2) return 4.0;
    return (config == 0) == (rank % 2 == 0) ? 20.0 : 1.0;
  });
  Kernel reduce = make("reduce", 2, [](int config, int) { return config == 0 ? 6.0 : 1.0; });
  int completed = 0;
  auto step = make_contextual(
      "step",
      [&](int n) {
        gemm(n);
        double value = world_rank(), sum = 0.0;
        MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);  // the outer's own collective
        reduce(n);
        ++completed;
        return sum;
      },
      options());
  const double ranks = world_size();
  EXPECT_EQ(step(64), ranks * (ranks - 1) / 2);

  ASSERT_TRUE(gemm.best_config());
  EXPECT_EQ(gemm.best_config()->id, 2);
  EXPECT_EQ(reduce.best_config()->id, 1);
  const KernelChoice tuned = *gemm.last_tuning();
  EXPECT_GE(tuned.candidates[0].agreed_ms, 20.0);
  EXPECT_GE(tuned.candidates[1].agreed_ms, 20.0);
  EXPECT_LT(tuned.candidates[2].agreed_ms, 20.0);
  EXPECT_EQ(gather_ints(static_cast<int>(tuned.best)), std::vector<int>(world_size(), 2));
  EXPECT_EQ(step.tuner().outer_runs(), 3 * 3 + 1);
  EXPECT_EQ(completed, step.tuner().outer_runs());
  EXPECT_TRUE(fs::exists(step.tuner().log_path()));
  EXPECT_EQ(step.tuner().log_path().filename(), "rank-" + std::to_string(world_rank()) + ".log");
}

TEST_F(MpiContext, AFailureOnOneRankAbandonsTheRunOnEveryRank) {
  const int last = world_size() - 1;
  Kernel gemm = make("gemm", 3, [last](int config, int rank) {
    if (config == 1) return rank == last ? -1.0 : 0.5;
    return config == 0 ? 3.0 : 1.0;
  });
  int started = 0, completed = 0;
  auto step = make_contextual(
      "step",
      [&](int n) {
        ++started;
        gemm(n);
        // Without the vote at the failed launch, the other ranks would wait here forever.
        double value = 1.0, sum = 0.0;
        MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ++completed;
        return sum;
      },
      options());
  EXPECT_EQ(step(8), world_size());

  const KernelChoice tuned = *gemm.last_tuning();
  EXPECT_EQ(tuned.best, 2u);
  EXPECT_TRUE(tuned.candidates[1].failed);
  if (world_rank() == last) {
    EXPECT_NE(tuned.candidates[1].error.find("cannot run here"), std::string::npos) << tuned.candidates[1].error;
  } else {
    EXPECT_EQ(tuned.candidates[1].error, "failed on rank " + std::to_string(last));
  }
  // Config 0: 3 runs; config 1 fails at its warm-up: 1 abandoned run; config 2: 3; final 1.
  EXPECT_EQ(started, 8);
  EXPECT_EQ(completed, 7);
  EXPECT_EQ(gather_ints(started), std::vector<int>(world_size(), 8));
}

TEST_F(MpiContext, DifferentCandidateListsAreRefusedOnEveryRank) {
  Kernel gemm = make("gemm", world_rank() == 0 ? 3 : 2, [](int, int) { return 0.1; });
  auto step = make_contextual("step", [&](int n) { gemm(n); }, options());
  try {
    step(8);
    FAIL() << "ranks with different candidate lists must be refused";
  } catch (const RankDisagreement& error) {
    EXPECT_NE(std::string(error.what()).find("candidate count"), std::string::npos) << error.what();
  }
  EXPECT_EQ(ContextualAutotuner::active(), nullptr);
  // Usable afterwards, on every rank together.
  Kernel same = make("same", 2, [](int config, int) { return config == 0 ? 2.0 : 0.5; });
  auto again = make_contextual("again", [&](int n) { same(n); }, options());
  again(8);
  EXPECT_EQ(same.best_config()->id, 1);
}

TEST_F(MpiContext, DifferentLaunchesOnOneRankAreRefusedOnEveryRank) {
  Kernel gemm = make("gemm", 2, [](int, int) { return 0.1; });
  auto step = make_contextual(
      "step",
      [&](int n) {
        gemm(n);
        if (world_rank() == 0) gemm(n);  // one more launch on rank 0 only
      },
      options());
  EXPECT_THROW(step(8), RankDisagreement);
}

}  // namespace
}  // namespace disttune
