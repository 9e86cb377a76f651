// When two measured times differ by more than their noise: confidence intervals and the choice among near-ties.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace disttune::detail {

/// Interval widths in standard errors: dropping a candidate is final, so it needs 3; two
/// candidates whose 2-wide intervals overlap are "within noise" of each other.
inline constexpr double kDropWidth = 3.0;
inline constexpr double kTieWidth = 2.0;

/// One candidate's agreed numbers: its statistic (ms), relative spread of its samples
/// (median absolute deviation over the median) and sample count.
struct TimeEstimate {
  double time_ms = 0.0;
  double noise = 0.0;
  int samples = 0;
};

/// Relative standard error of the median of `samples` samples of relative spread `noise`:
/// 1.4826 * noise estimates the standard deviation, the median's error is 1.2533 sd / sqrt(n).
/// The spread counts as at least 0.2% (a few samples that look identical do not prove a
/// noiseless clock), and the error is widened for few samples. +inf without samples.
double relative_standard_error(const TimeEstimate& estimate);

struct TimeInterval {
  double low = 0.0;
  double high = 0.0;
};

/// time_ms +- width standard errors.
TimeInterval interval(const TimeEstimate& estimate, double width);

/// True when `a` is faster than `b` by more than both intervals of `width` (they do not overlap).
bool clearly_faster(const TimeEstimate& a, const TimeEstimate& b, double width);

/// The choice among `contenders` (indices into `estimates`, none failed): the lowest time,
/// and every contender whose kTieWidth interval overlaps it is within noise of it. If the
/// baseline is within noise of the lowest, the baseline is kept; otherwise the lowest index
/// among the tie group's members whose time is within `equal_within` (a fraction) of the
/// lowest (stable from one tuning to the next where nothing measured separates them; 0:
/// the lowest time itself). `within_noise` lists the tie group when it has two or more.
struct NoiseChoice {
  std::optional<std::size_t> chosen;
  std::vector<std::size_t> within_noise;
};
NoiseChoice choose_within_noise(const std::vector<TimeEstimate>& estimates,
                                const std::vector<std::size_t>& contenders,
                                std::optional<std::size_t> baseline, double equal_within);

}  // namespace disttune::detail
