// LaunchGaps: the lead ahead of a timed run, and which runs timed the host's launch.
#include "cuda/launch_gaps.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace disttune::detail {

namespace {

/// Whether two host times beyond the lead are alike: within a factor of kAlikeHostTimes,
/// or kAlikeSlackMs (the host's own jitter) of each other.
bool alike(double a_ms, double b_ms) {
  return std::abs(a_ms - b_ms) <=
         std::max(LaunchGaps::kAlikeSlackMs, (LaunchGaps::kAlikeHostTimes - 1) * std::min(a_ms, b_ms));
}

}  // namespace

void LaunchGaps::reset() { *this = LaunchGaps(); }

double LaunchGaps::lead_ms(bool dry, double queued_ms) {
  if (probe_lead_ms_ > 0.0) {
    led_ms_ = probe_lead_ms_;
  } else if (lead_always_) {
    led_ms_ = queued_ms >= lead_ms_ ? 0.0 : lead_ms_;
  } else {
    led_ms_ = dry ? lead_ms_ : 0.0;
  }
  if (led_ms_ > 0.0) {
    ++led_runs_;
    leads_ms_ += led_ms_;
  }
  return led_ms_;
}

bool LaunchGaps::discards(bool gap, bool waited, double host_ms) {
  const double probe_ms = std::exchange(probe_lead_ms_, 0.0);
  remember_launch(host_ms);
  if (!gap) {
    gap_streak_ = 0;
    waiting_streak_ = 0;
    last_beyond_ms_ = -1.0;
    host_bound_ = false;
    if (lead_always_) lead_ms_ = std::clamp(2 * longest_recent_launch_ms(), kLeadMs, kMostLeadMs);
    return false;
  }
  ++gap_streak_;
  // A launcher that waits for the device returns once the lead and its own work are done:
  // its host time beyond the lead is its own, whatever the lead.
  const double beyond_ms = std::max(host_ms - led_ms_, 0.0);
  bool kept = false;
  if (host_bound_) {
    kept = keeps_host_bound(beyond_ms);
  } else {
    host_bound_ = becomes_host_bound(waited, host_ms, beyond_ms, probe_ms);
    kept = host_bound_;
  }
  if (kept) {
    ++host_bound_runs_;
    return false;
  }
  if (host_ms <= kLongestCoveredMs) {
    lead_always_ = true;
    lead_ms_ = std::clamp(2 * host_ms, lead_ms_, kMostLeadMs);
  }
  ++gapped_;
  return true;
}

void LaunchGaps::remember_launch(double host_ms) {
  if (host_ms > kLongestCoveredMs) return;  // a stall: no lead covers it
  launches_ms_[static_cast<std::size_t>(launches_seen_ % kLeadWindow)] = host_ms;
  ++launches_seen_;
}

double LaunchGaps::longest_recent_launch_ms() const {
  const auto kept = static_cast<std::ptrdiff_t>(std::min(launches_seen_, kLeadWindow));
  return kept == 0 ? 0.0 : *std::max_element(launches_ms_.begin(), launches_ms_.begin() + kept);
}

bool LaunchGaps::keeps_host_bound(double beyond_ms) {
  if (alike(beyond_ms, last_beyond_ms_) || ++unlike_streak_ >= kMostUnlikeInARow) {
    unlike_streak_ = 0;
    last_beyond_ms_ = beyond_ms;
    return true;
  }
  return false;  // a stall
}

bool LaunchGaps::becomes_host_bound(bool waited, double host_ms, double beyond_ms, double probe_ms) {
  const double before_ms = last_beyond_ms_;
  if (probe_ms > 0.0) {  // the test's run: its lead is not the launcher's own time
    waiting_streak_ = 0;
    if (waited && std::abs(beyond_ms - before_ms) <= kProbeTolerance * (probe_ms - probe_base_lead_ms_)) {
      return true;
    }
    return gap_streak_ >= kMostGapsInARow;
  }
  last_beyond_ms_ = beyond_ms;
  if (gap_streak_ >= kMostGapsInARow) return true;
  const bool like_before = before_ms >= 0.0 && alike(beyond_ms, before_ms);
  waiting_streak_ = !waited ? 0 : like_before ? waiting_streak_ + 1 : 1;
  if (waiting_streak_ >= kWaitingGaps) {
    waiting_streak_ = 0;
    probe_base_lead_ms_ = led_ms_;
    probe_lead_ms_ = led_ms_ + std::clamp(host_ms, kLeastProbeMs, kMostProbeMs);
  }
  return false;
}

Value LaunchGaps::counts() const {
  return Value{{"gapped_runs", gapped_}, {"host_bound_runs", host_bound_runs_}, {"lead_ms", lead_ms_},
               {"led_runs", led_runs_},       {"leads_ms", leads_ms_}};
}

}  // namespace disttune::detail
