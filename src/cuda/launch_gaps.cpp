// LaunchGaps: the lead ahead of a timed run, and which runs timed the host's launch.
#include "cuda/launch_gaps.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace disttune::detail {

void LaunchGaps::reset() { *this = LaunchGaps(); }

double LaunchGaps::lead_ms(bool dry) {
  if (probe_lead_ms_ > 0.0) {
    led_ms_ = probe_lead_ms_;
  } else if (host_bound_) {
    led_ms_ = dry ? kLeadMs : 0.0;
  } else {
    led_ms_ = lead_always_ || dry ? lead_ms_ : 0.0;
  }
  return led_ms_;
}

namespace {

/// Whether two host times beyond the lead are alike: within a factor of kAlikeHostTimes,
/// or kAlikeSlackMs (the host's own jitter) of each other.
bool alike(double a_ms, double b_ms) {
  return std::abs(a_ms - b_ms) <=
         std::max(LaunchGaps::kAlikeSlackMs, (LaunchGaps::kAlikeHostTimes - 1) * std::min(a_ms, b_ms));
}

}  // namespace

bool LaunchGaps::discards(bool gap, bool waited, double host_ms) {
  const double probe_ms = std::exchange(probe_lead_ms_, 0.0);
  if (!gap) {
    gap_streak_ = 0;
    waiting_streak_ = 0;
    last_beyond_ms_ = -1.0;
    host_bound_ = false;
    return false;
  }
  // A launcher that waits for the device returns once the lead and its own work are done:
  // its host time beyond the lead is its own, whatever the lead.
  const double beyond_ms = std::max(host_ms - led_ms_, 0.0);
  const double before_ms = last_beyond_ms_;
  if (probe_ms == 0.0) last_beyond_ms_ = beyond_ms;  // a test's lead is not the launcher's own
  const bool like_before = before_ms >= 0.0 && alike(beyond_ms, before_ms);
  if (host_bound_) {
    host_bound_ = waited && like_before;  // a stall ends the stretch, and starts a streak
    if (!host_bound_) gap_streak_ = 0;
  } else if (probe_ms > 0.0) {
    host_bound_ = waited && std::abs(beyond_ms - before_ms) <= kProbeTolerance * (probe_ms - probe_base_lead_ms_);
  }
  host_bound_ = host_bound_ || ++gap_streak_ >= kMostGapsInARow;
  if (host_bound_) {
    ++host_bound_runs_;
    return false;
  }
  waiting_streak_ = !waited || probe_ms > 0.0 ? 0 : like_before ? waiting_streak_ + 1 : 1;
  if (waiting_streak_ >= kWaitingGaps) {
    waiting_streak_ = 0;
    probe_base_lead_ms_ = led_ms_;
    probe_lead_ms_ = led_ms_ + std::clamp(host_ms, kLeastProbeMs, kMostProbeMs);
  }
  if (host_ms <= kLongestCoveredMs) {
    lead_always_ = true;
    lead_ms_ = std::clamp(2 * host_ms, lead_ms_, kMostLeadMs);
  }
  ++gapped_;
  return true;
}

Value LaunchGaps::counts() const {
  return Value{{"gapped_runs", gapped_}, {"host_bound_runs", host_bound_runs_}, {"lead_ms", lead_ms_}};
}

}  // namespace disttune::detail
