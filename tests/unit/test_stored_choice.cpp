// Tests of the stored choice: a record answers the same space, and a grown space measures
// the stored best again with the added candidates (one round) instead of a silent hit.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "disttune/autotune.hpp"
#include "disttune/store.hpp"
#include "store/stored_choice.hpp"
#include "said_timer.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::SaidTimer;
using testing::sample_record;
using testing::TempDir;

struct CostConfig {
  int id = 0;
  double cost_ms = 0.0;  ///< the time the timer reports for one run of this config
};
Value describe(const CostConfig& c) { return {{"id", c.id}}; }

class GrownSpace : public ::testing::Test {
 protected:
  using Tuned = Autotuned<CostConfig, int, int(int)>;

  // A tuned function over `configs`; its runs are counted per config id.
  Tuned make(std::vector<CostConfig> configs) {
    Tuned::Spec spec;
    spec.identity = {"grown", "v1"};
    spec.configs = std::move(configs);
    spec.key = [](const int& n) { return n; };
    spec.launch = [this](const CostConfig& c, int n) {
      ++runs_[c.id];
      timer_->said_ms = c.cost_ms;
      return n * 100 + c.id;
    };
    spec.options.measurement.strategy = "exhaustive";  // the run counts below are its
    spec.options.measurement.warmup_runs = 1;
    spec.options.measurement.timed_runs = 3;
    spec.options.cache_root = temp_.path();
    spec.options.timer = timer_;
    return Tuned(std::move(spec));
  }
  Record stored(const Tuned& tuned) const {
    const auto read = read_record(*tuned.last_report()->record_path);
    EXPECT_TRUE(read.record.has_value()) << read.error;
    return *read.record;
  }

  TempDir temp_;
  std::shared_ptr<SaidTimer> timer_ = std::make_shared<SaidTimer>();
  std::map<int, int> runs_;
};

const std::vector<CostConfig> kFirst = {{0, 4.0}, {1, 2.0}, {2, 3.0}};

TEST_F(GrownSpace, AFasterAddedConfigIsMeasuredWithTheStoredBestAndWins) {
  auto first = make(kFirst);
  EXPECT_EQ(first(7), 701);
  const Record before = stored(first);
  runs_.clear();

  std::vector<CostConfig> grown = kFirst;
  grown.push_back({3, 0.5});
  auto second = make(grown);
  EXPECT_EQ(second(7), 703);
  // Only the stored best and the added config ran: warm-up 1 + timed 3, and the final run.
  EXPECT_EQ(runs_, (std::map<int, int>{{1, 4}, {3, 5}}));
  const auto report = second.last_report();
  EXPECT_EQ(report->source, TuningReport::Source::tuned);
  ASSERT_EQ(report->candidates.size(), 4u);
  EXPECT_EQ(report->best, 3u);

  const Record after = stored(second);
  EXPECT_EQ(after.best_index, 3u);
  ASSERT_TRUE(after.refreshed.has_value());
  EXPECT_EQ(after.refreshed->measured, (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(after.refreshed->previous_best, 1u);
  EXPECT_EQ(after.refreshed->utc, after.created_utc);
  // The candidates not measured again keep the stored results of the first session.
  EXPECT_EQ(after.candidates[0].samples, before.candidates[0].samples);
  EXPECT_EQ(after.candidates[2].samples, before.candidates[2].samples);
  EXPECT_EQ(after.candidates[3].samples, (std::vector<double>{0.5, 0.5, 0.5}));

  // The same space again: a hit, nothing measured.
  runs_.clear();
  auto third = make(grown);
  EXPECT_EQ(third(7), 703);
  EXPECT_EQ(runs_, (std::map<int, int>{{3, 1}}));
  EXPECT_EQ(source_name(*third.last_report()), "disk");
}

TEST_F(GrownSpace, ASlowerAddedConfigKeepsTheStoredBestAndTheRecordSaysSo) {
  auto first = make(kFirst);
  EXPECT_EQ(first(7), 701);
  runs_.clear();
  std::vector<CostConfig> grown = {{4, 9.0}};
  grown.insert(grown.end(), kFirst.begin(), kFirst.end());  // added first: indices move
  auto second = make(grown);
  EXPECT_EQ(second(7), 701);
  EXPECT_EQ(runs_, (std::map<int, int>{{1, 5}, {4, 4}}));
  const Record after = stored(second);
  EXPECT_EQ(after.best_index, 2u);
  ASSERT_TRUE(after.refreshed.has_value());
  EXPECT_EQ(after.refreshed->measured, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(after.refreshed->previous_best, 2u);
}

TEST_F(GrownSpace, AShrunkSpaceWithTheStoredBestIsAHit) {
  auto first = make(kFirst);
  EXPECT_EQ(first(7), 701);
  runs_.clear();
  auto second = make({kFirst[1], kFirst[2]});
  EXPECT_EQ(second(7), 701);
  EXPECT_EQ(runs_, (std::map<int, int>{{1, 1}}));
}

TEST(StoredChoice, VotesSettleThePlanWithOneNumber) {
  detail::StoredChoice hit;
  hit.best = 2;
  EXPECT_EQ(hit.vote(), 2u);
  detail::StoredChoice grown = hit;
  grown.added = {0, 5};
  EXPECT_EQ(grown.remeasured(), (std::vector<std::size_t>{0, 2, 5}));
  ASSERT_TRUE(grown.vote().has_value());
  EXPECT_GE(*grown.vote(), std::size_t{1} << 51);
  EXPECT_LT(*grown.vote(), std::size_t{1} << 52);  // exact as a double
  detail::StoredChoice other = grown;
  other.added = {0, 4};
  EXPECT_NE(other.vote(), grown.vote());
  EXPECT_FALSE(detail::StoredChoice{}.vote().has_value());
}

TEST(RecordRefresh, RoundTripsAndIsCheckedOnRead) {
  Record record = sample_record();
  record.refreshed = RecordRefresh{"2026-11-30T10:00:00Z", {0, 3}, 0};
  const Value json = record_to_json(record);
  EXPECT_EQ(json["refreshed"], (Value{{"utc", "2026-11-30T10:00:00Z"},
                                      {"measured", {0, 3}},
                                      {"previous_best", 0}}));
  const RecordRead read = parse_record(json.dump());
  ASSERT_TRUE(read.record.has_value()) << read.error;
  EXPECT_EQ(read.record->refreshed->measured, (std::vector<std::size_t>{0, 3}));

  Value out_of_range = json;
  out_of_range["refreshed"]["measured"][1] = 4;
  EXPECT_EQ(parse_record(out_of_range.dump()).error,
            "disttune: record field 'refreshed.measured[1]' must be a candidate index from 0 to 3");
  Value without = json;
  without.erase("refreshed");
  EXPECT_FALSE(parse_record(without.dump()).record->refreshed.has_value());
}

}  // namespace
}  // namespace disttune
