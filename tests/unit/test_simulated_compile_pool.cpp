// Tests for the replay's compile pool: list scheduling of recorded compile times, the compiles
// sharing the cores or not.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "replay/simulated_compile_pool.hpp"

namespace disttune::detail {
namespace {

using Pool = SimulatedCompilePool;

/// Recorded seconds whose work on `cores` shared cores is `work` seconds (the tables' compile
/// times are each compile's share of 16 running together).
double recorded(double work, int cores) { return work * Pool::kRecordedCompilesAtOnce / cores; }

TEST(SimulatedCompilePool, NotSharedEachCompileLastsItsRecordedTime) {
  Pool pool({1.0, 2.0, 0.5}, 2);
  const std::vector<std::size_t> all{0, 1, 2};
  EXPECT_DOUBLE_EQ(pool.prepare(0.0, all, {}), 2.0);  // 2 waits for a thread until 1.0
  EXPECT_EQ(pool.finished(2, 2.0), 0.5);
}

TEST(SimulatedCompilePool, CoresForEveryCompileInFlightChangeNothing) {
  const std::vector<double> seconds{1.0, 2.0, 0.5, 0.75};
  Pool alone(seconds, 2), shared(seconds, 2, 0.0, Pool::kRecordedCompilesAtOnce);
  const std::vector<std::size_t> first{0, 1}, second{2, 3};
  EXPECT_DOUBLE_EQ(alone.prepare(0.0, first, second), shared.prepare(0.0, first, second));
  EXPECT_DOUBLE_EQ(alone.prepare(2.0, second, {}), shared.prepare(2.0, second, {}));
  for (std::size_t c = 0; c < seconds.size(); ++c) EXPECT_DOUBLE_EQ(*alone.finished(c, 3.0), *shared.finished(c, 3.0));
}

TEST(SimulatedCompilePool, CompilesInFlightTogetherShareTheCores) {
  // One core: alone a compile does its work at full speed; two at once each go at half.
  Pool one({recorded(0.1, 1)}, 2, 0.0, 1);
  const std::vector<std::size_t> first{0};
  EXPECT_NEAR(one.prepare(0.0, first, {}), 0.1, 1e-12);
  Pool two({recorded(0.1, 1), recorded(0.1, 1)}, 2, 0.0, 1);
  const std::vector<std::size_t> both{0, 1};
  EXPECT_NEAR(two.prepare(0.0, both, {}), 0.2, 1e-12);
  EXPECT_NEAR(*two.finished(0, 0.2), 0.2, 1e-12);  // its wall time, as a front end times it
}

TEST(SimulatedCompilePool, WaitingForTheFirstToEndCommitsNothing) {
  // Two compiles on one core; the caller waits for the first (it would end at 0.2) but stops
  // at 0.1 and queues a third: from then three share the core.
  Pool pool({recorded(0.1, 1), recorded(0.2, 1), recorded(0.1, 1)}, 3, 0.0, 1);
  const std::vector<std::size_t> first{0, 1}, third{2};
  const std::vector<std::size_t> zero{0};
  EXPECT_NEAR(pool.prepare(0.0, {}, first), 0.0, 1e-12);
  EXPECT_NEAR(pool.first_ended(0.0, zero), 0.2, 1e-12);
  // At 0.1: 0.05 of the first left, 0.15 of the second; three at a third each: the first ends
  // at 0.25, then the third (0.05 left) and the second at a half each: the third ends at 0.35.
  EXPECT_NEAR(pool.prepare(0.1, third, {}), 0.35, 1e-12);
  EXPECT_NEAR(*pool.finished(0, 0.35), 0.25, 1e-12);
  EXPECT_FALSE(pool.finished(1, 0.35));
}

TEST(SimulatedCompilePool, SharedCoresWaitForTheSetUpToo) {
  Pool pool({recorded(0.1, 1), recorded(0.1, 1)}, 2, 1.0, 1);
  const std::vector<std::size_t> both{0, 1};
  EXPECT_NEAR(pool.prepare(0.0, both, {}), 1.2, 1e-12);
  EXPECT_NEAR(*pool.finished(1, 1.2), 0.2, 1e-12);  // timed from the set-up's end
  EXPECT_EQ(pool.started_by(0.0), 2u);
}

TEST(SimulatedCompilePool, RefusesNegativeCoresAndNoThreads) {
  EXPECT_THROW(Pool({1.0}, 1, 0.0, -1), std::invalid_argument);
  EXPECT_THROW(Pool({1.0}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace disttune::detail
