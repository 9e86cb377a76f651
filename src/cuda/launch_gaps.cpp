// LaunchGaps: the lead ahead of a timed run, and which runs timed the host's launch.
#include "cuda/launch_gaps.hpp"

#include <algorithm>

namespace disttune::detail {

void LaunchGaps::reset() { *this = LaunchGaps(); }

double LaunchGaps::lead_ms(bool dry) {
  if (host_bound_) return dry ? kLeadMs : 0.0;
  return lead_always_ || dry ? lead_ms_ : 0.0;
}

bool LaunchGaps::discards(bool gap, bool waited, double host_ms) {
  if (!gap) {
    waiting_streak_ = 0;
    last_gap_host_ms_ = 0.0;
    host_bound_ = false;
    return false;
  }
  const bool alike = last_gap_host_ms_ > 0.0 && host_ms <= kAlikeHostTimes * last_gap_host_ms_ &&
                     last_gap_host_ms_ <= kAlikeHostTimes * host_ms;
  waiting_streak_ = !waited ? 0 : alike ? waiting_streak_ + 1 : 1;
  last_gap_host_ms_ = host_ms;
  if (host_bound_ || waiting_streak_ >= kWaitingGaps) {
    host_bound_ = true;
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

Value LaunchGaps::counts() const {
  return Value{{"gapped_runs", gapped_}, {"host_bound_runs", host_bound_runs_}, {"lead_ms", lead_ms_}};
}

}  // namespace disttune::detail
