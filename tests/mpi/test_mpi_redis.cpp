// Redis under MPI: ranks that fetched a record from Redis and ranks that did not stay in
// step (the cache vote decides for all); rank 0 alone writes to Redis. Rank 0 runs the server.
#include <mpi.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/function_tuner.hpp"
#include "disttune/mpi.hpp"
#include "mpi_test_support.hpp"
#include "redis_server.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using test::world_rank;
using test::world_size;

const std::vector<std::string> kCandidates = {R"({"block":1})", R"({"block":2})",
                                              R"({"block":3})"};

class MpiRedis : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world_rank() == 0) server_ = std::make_unique<testing::RedisServer>();
    int port = server_ ? server_->port() : 0;
    MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
    live_url_ = "redis://127.0.0.1:" + std::to_string(port);
    int dead = world_rank() == 0 ? testing::free_port() : 0;
    MPI_Bcast(&dead, 1, MPI_INT, 0, MPI_COMM_WORLD);
    dead_url_ = "redis://127.0.0.1:" + std::to_string(dead);
  }
  void TearDown() override { MPI_Barrier(MPI_COMM_WORLD); }

  /// A tuner on this rank's own directory (as if every rank were on a node of its own).
  std::unique_ptr<FunctionTuner> tuner(const fs::path& root, const std::string& url,
                                       const std::string& name = "scale") {
    TunerOptions options;
    options.measurement.strategy = "exhaustive";  // the run counts below are its
    options.measurement.warmup_runs = 0;
    options.measurement.timed_runs = 2;
    options.stores = {(root / ("rank" + std::to_string(world_rank()))).string(), url + "/0?prefix=mpi:&timeout=1"};
    options.communicator = make_mpi_communicator();
    return std::make_unique<FunctionTuner>(FunctionIdentity{name, "v1"}, options);
  }

  TuningReport resolve(FunctionTuner& tuner, int& runs) {
    TuningRequest request;
    request.key = "7";
    request.candidates = kCandidates;
    request.run = [&runs](std::size_t) { ++runs; };
    return tuner.resolve(request);
  }

  /// Every rank's value of `mine`.
  static std::vector<int> gather(int mine) {
    std::vector<int> all(static_cast<std::size_t>(world_size()));
    MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    return all;
  }

  std::unique_ptr<testing::RedisServer> server_;
  std::string live_url_;
  std::string dead_url_;
};

TEST_F(MpiRedis, ARecordSomeRanksFetchedAndOthersDidNotMakesEveryRankTune) {
  test::SharedTempDir temp;
  if (world_rank() == 0) {  // an earlier job, alone, left its tuning in Redis only
    TunerOptions options;
    options.measurement.strategy = "exhaustive";
    options.measurement.timed_runs = 1;
    options.stores = {(temp.path() / "earlier").string(), live_url_ + "/0?prefix=mpi:&timeout=1"};
    FunctionTuner earlier({"scale", "v1"}, options);
    TuningRequest request;
    request.key = "7";
    request.candidates = kCandidates;
    request.run = [](std::size_t) {};
    ASSERT_EQ(earlier.resolve(request).source, TuningReport::Source::tuned);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Rank 0 reaches Redis; the others cannot (their Redis is down).
  auto tuned = tuner(temp.path(), world_rank() == 0 ? live_url_ : dead_url_);
  int runs = 0;
  const TuningReport report = resolve(*tuned, runs);
  EXPECT_EQ(report.source, TuningReport::Source::tuned);
  for (const int best : gather(static_cast<int>(report.best))) EXPECT_EQ(best, report.best);
  for (const int n : gather(runs)) EXPECT_EQ(n, runs);
  EXPECT_EQ(runs, 6);
}

TEST_F(MpiRedis, RanksAgreeOnARecordFoundLocallyOnOneAndInRedisOnTheOthers) {
  test::SharedTempDir temp;
  int runs = 0;
  {
    auto first = tuner(temp.path(), live_url_, "shared");
    EXPECT_EQ(resolve(*first, runs).source, TuningReport::Source::tuned);
  }
  // Only rank 0 (local rank 0 on this one machine) wrote its directory: it reads locally,
  // every other rank reads Redis; all use the record.
  runs = 0;
  auto again = tuner(temp.path(), live_url_, "shared");
  const TuningReport report = resolve(*again, runs);
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(source_name(report), world_rank() == 0 ? "disk" : "redis");
  for (const int best : gather(static_cast<int>(report.best))) EXPECT_EQ(best, report.best);
}

TEST_F(MpiRedis, OnlyRankZeroWritesToRedis) {
  test::SharedTempDir temp;
  if (world_rank() == 0) server_->command({"CONFIG", "RESETSTAT"});
  MPI_Barrier(MPI_COMM_WORLD);
  auto tuned = tuner(temp.path(), live_url_, "writers");
  int runs = 0;
  EXPECT_EQ(resolve(*tuned, runs).source, TuningReport::Source::tuned);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    // One read per rank (EVAL of the read script), and rank 0's write: a compare-and-set that
    // reads the stored value, then replaces it only if unchanged (two EVALs).
    const detail::RedisReply info = server_->command({"INFO", "commandstats"});
    const std::string stats(info->str, info->len);
    const std::string expected = "cmdstat_eval:calls=" + std::to_string(world_size() + 2) + ",";
    EXPECT_NE(stats.find(expected), std::string::npos) << stats;
  }
}

}  // namespace
}  // namespace disttune
