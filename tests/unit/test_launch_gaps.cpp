// LaunchGaps: which runs timed the host's launch, and how the lead grows to keep it out.
#include "cuda/launch_gaps.hpp"

#include <gtest/gtest.h>

namespace disttune::detail {
namespace {

constexpr bool kGap = true;
constexpr bool kNoGap = false;
constexpr bool kWaited = true;
constexpr bool kLaunched = false;

TEST(LaunchGaps, LeadsOnlyADryStreamUntilARunHasAGap) {
  LaunchGaps gaps;
  EXPECT_EQ(gaps.lead_ms(true), LaunchGaps::kLeadMs);
  EXPECT_EQ(gaps.lead_ms(false), 0.0);
  EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 0.03));
  EXPECT_FALSE(gaps.leads_always());
  EXPECT_EQ(gaps.counts()["gapped_runs"], 0);
}

TEST(LaunchGaps, ALaunchSlowerThanTheLeadIsDiscardedAndEveryLaterRunIsLedByTwiceIt) {
  LaunchGaps gaps;
  gaps.lead_ms(true);
  EXPECT_TRUE(gaps.discards(kGap, kLaunched, 0.3));
  EXPECT_TRUE(gaps.leads_always());
  EXPECT_DOUBLE_EQ(gaps.lead_ms(false), 0.6);
  EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 0.3));
  EXPECT_TRUE(gaps.discards(kGap, kLaunched, 0.1));  // a shorter gapped launch never shrinks the lead
  EXPECT_DOUBLE_EQ(gaps.lead_ms(true), 0.6);
  EXPECT_EQ(gaps.counts()["gapped_runs"], 2);
  EXPECT_DOUBLE_EQ(gaps.counts()["lead_ms"].get<double>(), 0.6);
}

TEST(LaunchGaps, ARunWithEnoughDeviceTimeQueuedAheadIsNotLedAfterASlowLaunch) {
  LaunchGaps gaps;
  EXPECT_TRUE(gaps.discards(kGap, kLaunched, 0.2));  // one slow launch: every later run is due a lead of 0.4 ms
  EXPECT_DOUBLE_EQ(gaps.lead_ms(false, 0.0), 0.4) << "nothing known queued ahead: led";
  EXPECT_DOUBLE_EQ(gaps.lead_ms(false, 0.39), 0.4) << "less queued than the lead: led";
  EXPECT_EQ(gaps.lead_ms(false, 0.4), 0.0) << "the runs queued ahead cover the lead";
  EXPECT_EQ(gaps.lead_ms(true, 5.0), 0.0);
  EXPECT_EQ(gaps.counts()["led_runs"], 2);
  EXPECT_DOUBLE_EQ(gaps.counts()["leads_ms"].get<double>(), 0.8);
}

TEST(LaunchGaps, TheLeadShrinksBackOnceTheLastLaunchesAreQuickAgain) {
  LaunchGaps gaps;
  EXPECT_TRUE(gaps.discards(kGap, kLaunched, 0.3));  // one slow launch (a GC pause)
  EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 12.0));  // a stall: not a launch the lead sizes from
  for (int i = 1; i < LaunchGaps::kLeadWindow; ++i) {
    EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 0.03));
    EXPECT_DOUBLE_EQ(gaps.lead_ms(false), 0.6) << "the slow launch is among the last " << LaunchGaps::kLeadWindow;
  }
  EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 0.03));
  EXPECT_DOUBLE_EQ(gaps.lead_ms(false), LaunchGaps::kLeadMs) << "twice 0.03 ms, at least the first lead";
  EXPECT_TRUE(gaps.leads_always());
  EXPECT_TRUE(gaps.discards(kGap, kLaunched, 0.2));  // slow again: the lead grows at once
  EXPECT_DOUBLE_EQ(gaps.lead_ms(false), 0.4);
}

TEST(LaunchGaps, AStallLongerThanAnyLeadIsDiscardedAndLeavesTheLeadAsItWas) {
  LaunchGaps gaps;
  for (int i = 0; i < 20; ++i) {
    if (i % 4 == 3) {
      EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 0.03));
    } else {
      EXPECT_TRUE(gaps.discards(kGap, kLaunched, 12.0));  // the GIL held by compiles
    }
  }
  EXPECT_FALSE(gaps.leads_always());
  EXPECT_EQ(gaps.lead_ms(true), LaunchGaps::kLeadMs);
  EXPECT_EQ(gaps.counts()["host_bound_runs"], 0) << "stalls between clean runs are never kept";
}

/// One run of a launcher that waits for its kernel behind the lead: the host returns once
/// the lead and the kernel are done. Whether the run is discarded.
bool waiting_run(LaunchGaps& gaps, double kernel_ms) {
  const double lead_ms = gaps.lead_ms(true);  // the stream is dry: the launcher synchronized
  return gaps.discards(kGap, kWaited, lead_ms + kernel_ms + 0.01);
}

TEST(LaunchGaps, ATestOfCauseLeadsWhateverIsQueued) {
  LaunchGaps gaps;
  for (int i = 0; i < LaunchGaps::kWaitingGaps; ++i) EXPECT_TRUE(waiting_run(gaps, 1.0));
  EXPECT_GT(gaps.lead_ms(false, 50.0), LaunchGaps::kLeastProbeMs) << "the test's longer lead";
}

TEST(LaunchGaps, ALauncherThatWaitsForTheDeviceLosesAFewRunsThenIsKeptUntilARunHasNoGap) {
  for (const double kernel_ms : {0.02, 1.0, 30.0}) {
    LaunchGaps gaps;
    int lost = 0;
    while (waiting_run(gaps, kernel_ms)) ASSERT_LE(++lost, LaunchGaps::kMostGapsInARow - 1) << kernel_ms;
    for (int i = 0; i < 20; ++i) EXPECT_FALSE(waiting_run(gaps, kernel_ms)) << kernel_ms;
    EXPECT_EQ(gaps.counts()["gapped_runs"], lost);
    EXPECT_EQ(gaps.counts()["host_bound_runs"], 21);
    EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 0.05));
    EXPECT_TRUE(gaps.discards(kGap, kLaunched, 0.05)) << "a run without a gap ended the host-bound stretch";
  }
}

TEST(LaunchGaps, AHostHeavyLauncherWhoseWorkStillRunsAtItsReturnIsKeptAfterSevenDiscards) {
  LaunchGaps gaps;  // a contextual outer call: 2 ms of host work between its launches
  int lost = 0;
  while (true) {
    gaps.lead_ms(true);
    if (!gaps.discards(kGap, kLaunched, 2.0 + 0.1 * (lost % 3))) break;
    ++lost;
  }
  EXPECT_EQ(lost, LaunchGaps::kMostGapsInARow - 1);
  for (int i = 0; i < 30; ++i) {
    gaps.lead_ms(true);
    EXPECT_FALSE(gaps.discards(kGap, kLaunched, 2.0 + 0.1 * (i % 3))) << i;
  }
}

TEST(LaunchGaps, GapsInARowAreKeptAfterSevenWhateverTheTestOfCauseSays) {
  LaunchGaps gaps;  // host times alike that do not follow the lead
  int lost = 0;
  while (true) {
    gaps.lead_ms(true);
    if (!gaps.discards(kGap, kWaited, 0.5)) break;
    ++lost;
  }
  EXPECT_EQ(lost, LaunchGaps::kMostGapsInARow - 1);
  gaps.lead_ms(true);
  EXPECT_FALSE(gaps.discards(kGap, kWaited, 0.5)) << "kept while the gaps stay alike";
}

TEST(LaunchGaps, AStallInsideAHostBoundStretchIsDiscardedAndTheStretchGoesOn) {
  LaunchGaps gaps;
  while (waiting_run(gaps, 0.02)) {
  }
  gaps.lead_ms(true);
  EXPECT_TRUE(gaps.discards(kGap, kWaited, 40.0));
  EXPECT_FALSE(waiting_run(gaps, 0.02));
}

TEST(LaunchGaps, AHostBoundLauncherWhoseOwnTimeChangesIsKeptAfterTwoDiscards) {
  LaunchGaps gaps;
  while (waiting_run(gaps, 0.02)) {
  }
  EXPECT_TRUE(waiting_run(gaps, 5.0));
  EXPECT_TRUE(waiting_run(gaps, 5.0));
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(waiting_run(gaps, 5.0)) << i;
}

TEST(LaunchGaps, StallsInARowAreNeverTakenForAWaitingLauncher) {
  LaunchGaps gaps;  // the H200's stalls while 16 threads compiled: alike, whatever the lead
  for (int i = 0; i < 40; ++i) {
    if (i % 5 == 4) {
      EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 0.03));  // a clean run now and then
    }
    gaps.lead_ms(true);
    EXPECT_TRUE(gaps.discards(kGap, kWaited, 36.0 + (i % 4) * 2.5)) << i;
  }
  EXPECT_FALSE(gaps.discards(kNoGap, kLaunched, 0.03));
  for (const double host_ms : {0.5, 12.0, 1.5, 37.0, 2.6, 8.0, 0.7}) {
    gaps.lead_ms(true);
    EXPECT_TRUE(gaps.discards(kGap, kWaited, host_ms)) << host_ms;
  }
  EXPECT_EQ(gaps.counts()["host_bound_runs"], 0);
}

TEST(LaunchGaps, TheLeadNeverPassesItsMostAndResetStartsOver) {
  LaunchGaps gaps;
  EXPECT_TRUE(gaps.discards(kGap, kLaunched, LaunchGaps::kLongestCoveredMs));
  EXPECT_DOUBLE_EQ(gaps.lead_ms(false), LaunchGaps::kMostLeadMs);
  gaps.reset();
  EXPECT_FALSE(gaps.leads_always());
  EXPECT_EQ(gaps.lead_ms(true), LaunchGaps::kLeadMs);
  EXPECT_EQ(gaps.counts()["gapped_runs"], 0);
}

}  // namespace
}  // namespace disttune::detail
