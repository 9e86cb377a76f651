// LaunchGaps: the lead ahead of a timed run, and which runs timed the host's launch.
#pragma once

#include <array>

#include "disttune/config.hpp"

namespace disttune::detail {

/// How CudaTimer keeps the host's launch out of its event pairs (with steady_clock).
///
/// A run is led by a busy kernel (the lead) when the stream has run dry, so the host
/// enqueues the run and its stop event while the lead executes. A run whose start event had
/// already completed when its launch returned has a gap: the device waited for the host
/// inside the pair. Such a run is discarded (the tuning takes it again), and:
/// - if the launch took at most kLongestCoveredMs of host time, every later run is led, by
///   twice that time at least: the lead then covers a launch that slow. A run with at least
///   that much device time queued ahead of it (runs enqueued and not yet started) needs no
///   lead and gets none. The lead is twice the longest of the last kLeadWindow launches
///   (stalls left out), so one slow launch is not paid for by every later run: once the
///   launches are quick again it shrinks back, to kLeadMs at least;
/// - a longer launch is a stall (the GIL held by a compile, a page fault): no lead covers
///   it and the lead is left as it was.
///
/// Some launchers gap whatever the lead: one that waits for the device (it synchronizes),
/// or one whose host work outlasts the longest lead (a contextual outer call). Their runs
/// are kept as they are once the tuning is host-bound (their time then includes the host,
/// as the spec's method times them); discarding them run after run would fail every
/// candidate past the re-take allowance (the spec's 10 timed runs). A tuning is host-bound
/// - after a test of cause: kWaitingGaps gaps in a row with all the stream's work completed
///   when the launch returned and alike host times beyond the lead make the next run's lead
///   longer by the last host time (1-100 ms). A launcher that waits for the device takes
///   that much longer on the host, its time beyond the lead unchanged; a stall does not
///   follow the lead (stalls come in streaks too: 16 threads compiling hold the GIL run
///   after run, 36-44 ms each on the H200);
/// - or after kMostGapsInARow gaps in a row, whatever the test said (a device shared with
///   other work can hide a waiting launcher: on the H200 the GPU test's synchronizing
///   launcher failed the test while other GPU tests ran beside it, and passed it at its
///   fourth run when run alone).
/// While host-bound, a gap whose host time beyond the lead is alike the stretch's is kept;
/// one unlike is a stall and discarded, until kMostUnlikeInARow in a row show that the
/// launcher's own time changed (then kept, the new time the stretch's). Runs are led as
/// before; the first run without a gap ends the stretch.
class LaunchGaps {
 public:
  /// The lead of a run on a stream that has run dry (nothing enqueued since the last wait,
  /// or all of it done).
  static constexpr double kLeadMs = 0.1;
  /// The longest lead; a gapped launch longer than half of it is a stall.
  static constexpr double kMostLeadMs = 0.8;
  static constexpr double kLongestCoveredMs = kMostLeadMs / 2;
  /// Launches the lead is sized from: the last this many runs' host times.
  static constexpr int kLeadWindow = 16;
  static constexpr int kWaitingGaps = 3;
  static constexpr int kMostGapsInARow = 8;
  static constexpr int kMostUnlikeInARow = 3;
  /// Host times beyond the lead are alike within this factor or this many ms.
  static constexpr double kAlikeHostTimes = 2.0;
  static constexpr double kAlikeSlackMs = 0.05;
  /// How much longer the test's lead is than the last: the last host time, within these.
  static constexpr double kLeastProbeMs = 1.0;
  static constexpr double kMostProbeMs = 100.0;
  /// The test passes when the host time beyond the lead stayed within this fraction of the
  /// added lead.
  static constexpr double kProbeTolerance = 0.25;

  /// Starts a tuning: the lead back to kLeadMs, the counts to 0.
  void reset();
  /// Whether the next run is led whatever the stream holds (so whether it has run dry need
  /// not be asked).
  bool leads_always() const { return lead_always_; }
  /// The lead (ms) to enqueue ahead of the next run, 0 for none; `dry`: the stream has run
  /// dry; `queued_ms`: device time known to be queued ahead of the run (0 if unknown).
  double lead_ms(bool dry, double queued_ms = 0.0);
  /// After a run's launch returned: `gap`, its start event had completed; `waited`, asked
  /// on a gap only, all the stream's work had completed; `host_ms`, the host's time from
  /// the run's start() to here. Whether to discard the run.
  bool discards(bool gap, bool waited, double host_ms);
  /// {"gapped_runs": discarded for a gap, "host_bound_runs": gapped runs kept, "lead_ms":
  /// the lead at the end, "led_runs": runs that had a lead, "leads_ms": the leads' device
  /// time} of this tuning.
  Value counts() const;

 private:
  /// A gap while host-bound: whether it is kept.
  bool keeps_host_bound(double beyond_ms);
  /// A gap while not host-bound: whether the tuning becomes host-bound with it.
  bool becomes_host_bound(bool waited, double host_ms, double beyond_ms, double probe_ms);
  /// Keeps a launch's host time among the last kLeadWindow (a stall's is left out).
  void remember_launch(double host_ms);
  /// The longest launch among the last kLeadWindow kept.
  double longest_recent_launch_ms() const;

  double lead_ms_ = kLeadMs;
  bool lead_always_ = false;
  bool host_bound_ = false;
  int gap_streak_ = 0;       ///< gaps in a row
  int waiting_streak_ = 0;   ///< gaps in a row with the stream's work done, alike
  int unlike_streak_ = 0;    ///< host-bound: gaps in a row unlike the stretch's
  double last_beyond_ms_ = -1.0;   ///< the last gap's host time beyond its lead (-1: none)
  double led_ms_ = 0.0;            ///< the lead ahead of the open run
  double probe_lead_ms_ = 0.0;     ///< > 0: the next run's lead tests for a waiting launcher
  double probe_base_lead_ms_ = 0.0;  ///< the lead of the run before the test
  int gapped_ = 0;
  int host_bound_runs_ = 0;
  int led_runs_ = 0;
  double leads_ms_ = 0.0;
  std::array<double, kLeadWindow> launches_ms_{};  ///< recent launches' host times, a ring
  int launches_seen_ = 0;
};

}  // namespace disttune::detail
