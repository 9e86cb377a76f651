// Rank-split tuning (src/engine/rank_split.cpp through FunctionTuner): shares, one all-gather, one choice.
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/context.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/store.hpp"
#include "said_timer.hpp"
#include "tuning_replay.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;

using testing::SaidTimer;

const std::vector<double> kCosts = {5.0, 4.0, 1.0, 3.0, 2.0};

std::vector<std::string> candidates() {
  std::vector<std::string> list;
  for (std::size_t i = 0; i < kCosts.size(); ++i) list.push_back("{\"id\":" + std::to_string(i) + "}");
  return list;
}

struct RankOutcome {
  TuningReport report;
  std::vector<int> runs = std::vector<int>(kCosts.size(), 0);
  std::string error;
};

/// Tunes the 5 candidates split across `ranks` simulated ranks; `broken(rank, i)` fails a run.
std::vector<RankOutcome> tune_split(int ranks, const std::function<bool(int, std::size_t)>& broken,
                                    const std::optional<fs::path>& root = std::nullopt) {
  simulation::LockstepRanks lockstep(ranks);
  std::vector<RankOutcome> outcomes(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      RankOutcome& outcome = outcomes[static_cast<std::size_t>(r)];
      try {
        auto comm = std::make_shared<simulation::LockstepRanks::Rank>(lockstep, r);
        auto timer = std::make_shared<SaidTimer>();
        TunerOptions options;
        options.measurement.warmup_runs = 1;
        options.measurement.timed_runs = 2;
        options.measurement.strategy = "exhaustive";
        options.timer = timer;
        options.communicator = comm;
        options.split_across_ranks = true;
        options.disk_cache = root.has_value();
        options.cache_root = root;
        FunctionTuner tuner({"split_fn", "v1"}, options);
        TuningRequest request;
        request.key = "[1]";
        request.candidates = candidates();
        request.run = [&](std::size_t i) {
          ++outcome.runs[i];
          if (broken && broken(r, i)) throw std::runtime_error("out of resources");
          timer->said_ms = kCosts[i];
        };
        outcome.report = tuner.resolve(request);
      } catch (const std::exception& error) {
        outcome.error = error.what();
      }
      lockstep.leave(r);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

TEST(RankSplit, SharesAreIndexModuloRanks) {
  EXPECT_EQ(split_share(5, 0, 2), (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(split_share(5, 1, 2), (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(split_share(2, 2, 3), std::vector<std::size_t>{});
  EXPECT_THROW(split_share(5, 2, 2), std::invalid_argument);
}

TEST(RankSplit, EachRankMeasuresOnlyItsShareAndAllTakeTheGlobalBest) {
  for (int ranks : {2, 3}) {
    const std::vector<RankOutcome> outcomes = tune_split(ranks, nullptr);
    for (int r = 0; r < ranks; ++r) {
      const RankOutcome& outcome = outcomes[static_cast<std::size_t>(r)];
      ASSERT_EQ(outcome.error, "") << "rank " << r;
      EXPECT_EQ(outcome.report.best, 2u) << "rank " << r;
      EXPECT_EQ(outcome.report.split_ranks, ranks);
      for (std::size_t i = 0; i < kCosts.size(); ++i) {
        const bool mine = static_cast<int>(i % static_cast<std::size_t>(ranks)) == r;
        EXPECT_EQ(outcome.runs[i], mine ? 1 + 2 : 0) << "rank " << r << " candidate " << i;
        // Every rank knows every candidate's time, from the rank that measured it.
        EXPECT_DOUBLE_EQ(outcome.report.candidates[i].agreed_ms, kCosts[i]);
        EXPECT_EQ(outcome.report.candidates[i].samples.size(), 2u);
      }
    }
  }
}

TEST(RankSplit, AFailureOnTheMeasuringRankIsKnownEverywhereWithItsReason) {
  const std::vector<RankOutcome> outcomes = tune_split(2, [](int rank, std::size_t i) { return rank == 0 && i == 2; });
  for (const RankOutcome& outcome : outcomes) {
    ASSERT_EQ(outcome.error, "");
    EXPECT_TRUE(outcome.report.candidates[2].failed);
    EXPECT_EQ(outcome.report.candidates[2].error, "on rank 0: out of resources");
    EXPECT_EQ(outcome.report.best, 4u);  // 2.0 ms, measured by rank 0
  }
}

TEST(RankSplit, EveryFailureListsEveryReason) {
  const std::vector<RankOutcome> outcomes = tune_split(2, [](int, std::size_t) { return true; });
  for (const RankOutcome& outcome : outcomes) {
    EXPECT_NE(outcome.error.find("every config of 'split_fn' failed"), std::string::npos) << outcome.error;
    EXPECT_NE(outcome.error.find("on rank 1: out of resources"), std::string::npos) << outcome.error;
  }
}

TEST(RankSplit, TheRecordSaysHowItWasSplitAndOldRecordsReadAsNotSplit) {
  const fs::path root = fs::temp_directory_path() / ("disttune-split-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const std::vector<RankOutcome> outcomes = tune_split(2, nullptr, root);
  ASSERT_EQ(outcomes[0].error, "");
  ASSERT_TRUE(outcomes[0].report.record_path);  // local rank 0 writes
  const RecordRead read = read_record(*outcomes[0].report.record_path);
  ASSERT_TRUE(read.record) << read.error;
  EXPECT_EQ(read.record->split_ranks, 2);
  EXPECT_EQ(read.record->ranks, 2);
  Value json = record_to_json(*read.record);
  EXPECT_EQ(json.at("split"), (Value{{"ranks", 2}, {"assignment", "index modulo ranks"}}));
  json.erase("split");
  EXPECT_EQ(record_from_json(json).split_ranks, 0);
  json["split"] = Value{{"ranks", 3}, {"assignment", "index modulo ranks"}};
  EXPECT_THROW(record_from_json(json), std::runtime_error);
  fs::remove_all(root);
}

TEST(RankSplit, RanksMustAgreeOnSplitting) {
  simulation::LockstepRanks lockstep(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        TunerOptions options;
        options.communicator = std::make_shared<simulation::LockstepRanks::Rank>(lockstep, r);
        options.split_across_ranks = r == 0;
        options.disk_cache = false;
        FunctionTuner tuner({"split_fn", "v1"}, options);
        TuningRequest request{"[1]", candidates(), [](std::size_t) {}, false, nullptr, {}, {}, {}, {}};
        (void)tuner.resolve(request);
      } catch (const RankDisagreement& error) {
        errors[static_cast<std::size_t>(r)] = error.what();
      }
      lockstep.leave(r);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors) EXPECT_NE(error.find("split across ranks"), std::string::npos) << error;
}

TEST(RankSplit, ContextualTuningWithIsDistRefusesIt) {
  ContextOptions options;
  options.is_dist = true;
  options.split_across_ranks = true;
  options.communicator = std::make_shared<SingleProcessCommunicator>();
  try {
    ContextualAutotuner tuner("pipeline", options);
    FAIL() << "is_dist with split_across_ranks was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("cannot be split across ranks with is_dist"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace disttune
