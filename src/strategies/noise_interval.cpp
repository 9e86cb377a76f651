// Confidence intervals of agreed times, and the choice among candidates within noise of the fastest.
#include "strategies/noise_interval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace disttune::detail {
namespace {

/// Standard deviation over median absolute deviation (normal samples), and the median's
/// standard error over the mean's (normal samples, large n).
constexpr double kMadToSd = 1.4826;
constexpr double kMedianEfficiency = 1.2533;
/// The least relative spread assumed of real timings.
constexpr double kNoiseFloor = 0.002;
/// Few samples estimate their spread poorly: the error is widened by 1 + kFewSamples / (n - 1)
/// (about Student's t over the normal quantile: x3.5 at 2 samples, x1.3 at 10).
constexpr double kFewSamples = 2.5;

}  // namespace

double relative_standard_error(const TimeEstimate& estimate) {
  if (estimate.samples <= 0) return std::numeric_limits<double>::infinity();
  const double spread = std::max(estimate.noise, kNoiseFloor);
  const double n = static_cast<double>(estimate.samples);
  const double few = n > 1.0 ? 1.0 + kFewSamples / (n - 1.0) : 1.0 + kFewSamples;
  return few * kMadToSd * kMedianEfficiency * spread / std::sqrt(n);
}

TimeInterval interval(const TimeEstimate& estimate, double width) {
  const double half = width * relative_standard_error(estimate) * estimate.time_ms;
  return {estimate.time_ms - half, estimate.time_ms + half};
}

bool clearly_faster(const TimeEstimate& a, const TimeEstimate& b, double width) {
  return interval(a, width).high < interval(b, width).low;
}

NoiseChoice choose_within_noise(const std::vector<TimeEstimate>& estimates,
                                const std::vector<std::size_t>& contenders,
                                std::optional<std::size_t> baseline, double equal_within) {
  NoiseChoice choice;
  std::optional<std::size_t> fastest;
  for (std::size_t c : contenders) {
    if (!fastest || estimates[c].time_ms < estimates[*fastest].time_ms) fastest = c;
  }
  if (!fastest) return choice;
  std::vector<std::size_t> group;
  for (std::size_t c : contenders) {
    if (c == *fastest || !clearly_faster(estimates[*fastest], estimates[c], kTieWidth)) group.push_back(c);
  }
  std::sort(group.begin(), group.end());
  if (baseline && std::find(group.begin(), group.end(), *baseline) != group.end()) {
    choice.chosen = baseline;
  } else {
    const double limit = estimates[*fastest].time_ms * (1.0 + equal_within);
    for (std::size_t c : group) {
      if (c == *fastest || estimates[c].time_ms <= limit) {
        choice.chosen = c;  // the group is ascending: the lowest such index
        break;
      }
    }
  }
  if (group.size() > 1) choice.within_noise = std::move(group);
  return choice;
}

}  // namespace disttune::detail
