// Rounds that leave out unprepared candidates over MPI (-np 2-4): every rank leaves out the same.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/function_tuner.hpp"
#include "disttune/mpi.hpp"
#include "disttune/strategy.hpp"
#include "mpi_test_support.hpp"
#include "said_timer.hpp"  // tests/unit

namespace disttune {
namespace {

using test::gather_ints;
using test::world_rank;
using test::world_size;
using testing::SaidTimer;

constexpr std::size_t kCandidates = 6;

/// One round over every candidate that may leave out the unprepared once two ran, without
/// patience; then the end. Keeps which candidates the standings mark left out.
class LeavesOutAfterTwo final : public Strategy {
 public:
  static inline std::set<std::size_t> left_out;
  Round first_round(std::size_t count) override {
    Round round = Round::every(count, 0, 2);
    round.leave_unprepared = LeaveUnprepared{2, 0.0, 0.0};
    return round;
  }
  Round next_round(const std::vector<CandidateStanding>& standings) override {
    std::vector<std::size_t> ran;
    for (std::size_t c = 0; c < standings.size(); ++c) {
      if (standings[c].left_out) left_out.insert(c);
      if (!standings[c].left_out) ran.push_back(c);
    }
    return Round{ran, 0, 0};
  }
};

/// The candidates' bits as one int, to compare across ranks.
int bits(const std::set<std::size_t>& candidates) {
  int mask = 0;
  for (std::size_t c : candidates) mask |= 1 << c;
  return mask;
}

// Rank r's compile of candidate r + 1 never ends (it is only ever named ahead); every other
// compile ends as soon as it is named. Each rank alone would leave out only its own slow one;
// agreed, every rank runs those prepared on all ranks (0 and size + 1 ..) and leaves out
// 1 .. size, and all choose the same. The agreement is by prepared flags, not by time: the
// result does not depend on how fast a rank gets there.
TEST(MpiLeftOut, EveryRankLeavesOutTheCandidatesUnpreparedOnAnyRank) {
  ASSERT_LT(static_cast<std::size_t>(world_size()), kCandidates - 1);
  register_strategy("test_leaves_out_after_two",
                    [](const Measurement&) { return std::make_unique<LeavesOutAfterTwo>(); });
  const auto slow_here = static_cast<std::size_t>(world_rank()) + 1;
  auto timer = std::make_shared<SaidTimer>();
  TunerOptions options;
  options.measurement.strategy = "test_leaves_out_after_two";
  options.timer = timer;
  options.disk_cache = false;
  options.communicator = make_mpi_communicator();
  FunctionTuner tuner({"left_out_ranks", "test-v1"}, options);

  std::vector<bool> named(kCandidates, false);
  std::set<std::size_t> run;
  TuningRequest request;
  request.key = "[1]";
  for (std::size_t c = 0; c < kCandidates; ++c) request.candidates.push_back(std::to_string(c));
  request.run = [&](std::size_t c) {
    run.insert(c);
    timer->said_ms = 10.0 - static_cast<double>(c);  // the last candidate is the fastest
  };
  request.prepare = [&](std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
    for (std::size_t c : now) named[c] = true;
    for (std::size_t c : ahead) named[c] = true;
    return std::vector<std::string>(now.size());
  };
  request.prepared = [&](std::size_t c) -> std::optional<double> {
    if (!named[c] || c == slow_here) return std::nullopt;
    return 0.5;
  };
  const TuningReport report = tuner.resolve(request);

  std::set<std::size_t> expected_left_out;
  for (std::size_t c = 1; c <= static_cast<std::size_t>(world_size()); ++c) expected_left_out.insert(c);
  EXPECT_EQ(LeavesOutAfterTwo::left_out, expected_left_out);
  for (std::size_t c : expected_left_out) EXPECT_EQ(run.count(c), 0u) << "candidate " << c;
  EXPECT_EQ(run.size(), kCandidates - expected_left_out.size());
  const std::vector<int> left_out_bits = gather_ints(bits(LeavesOutAfterTwo::left_out));
  const std::vector<int> run_bits = gather_ints(bits(run));
  const std::vector<int> best = gather_ints(static_cast<int>(report.best));
  for (int r = 1; r < world_size(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(left_out_bits[i], left_out_bits[0]) << "rank " << r;
    EXPECT_EQ(run_bits[i], run_bits[0]) << "rank " << r;
    EXPECT_EQ(best[i], best[0]) << "rank " << r;
  }
  EXPECT_EQ(report.best, kCandidates - 1);
}

}  // namespace
}  // namespace disttune
