// Paired timing of several arms against arm 0, round by round, with the median difference
// and its distribution-free 95% confidence interval (the hit-path benchmarks, CPU and GPU).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace disttune::bench {

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// One arm's figures, in ns per call.
struct ArmFigure {
  std::string arm;
  double per_call_ns = 0.0;   ///< median per-call time of the arm's batches
  double overhead_ns = 0.0;   ///< median of per-round (arm - arm 0)
  double ci_low_ns = 0.0;     ///< 95% confidence interval of that median
  double ci_high_ns = 0.0;
  double quartile_low_ns = 0.0;
  double quartile_high_ns = 0.0;
};

struct PairedFigures {
  std::vector<ArmFigure> arms;  ///< in the order of the names; arms[0] is the reference
  int rounds = 0;
  int batch = 0;
};

/// Runs `rounds` rounds of every arm (`time_arm(arm)` times one batch of `batch` calls and
/// returns ns per call) after `warmup_rounds` not kept. The arm that goes first rotates from
/// round to round, so none always follows another; an arm's overhead is the median of the
/// rounds' paired differences against arm 0, which cancels slow drift of the machine, with
/// the order statistics n/2 -+ 0.98 sqrt(n) as its 95% confidence interval.
template <class TimeArm>
PairedFigures paired_arms(const std::vector<std::string>& names, int rounds, int warmup_rounds, int batch,
                          TimeArm&& time_arm) {
  const std::size_t count = names.size();
  std::vector<std::vector<double>> per_call(count), differences(count);
  std::vector<double> times(count);
  for (int round = 0; round < warmup_rounds + rounds; ++round) {
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t arm = (static_cast<std::size_t>(round) + k) % count;
      times[arm] = time_arm(arm);
    }
    if (round < warmup_rounds) continue;
    for (std::size_t arm = 0; arm < count; ++arm) {
      per_call[arm].push_back(times[arm]);
      differences[arm].push_back(times[arm] - times[0]);
    }
  }
  PairedFigures figures;
  figures.rounds = rounds;
  figures.batch = batch;
  for (std::size_t arm = 0; arm < count; ++arm) {
    std::vector<double>& sorted = differences[arm];
    std::sort(sorted.begin(), sorted.end());
    const double n = static_cast<double>(sorted.size());
    const double half_width = 0.98 * std::sqrt(n);  // 1.96 / 2 * sqrt(n) ranks
    const auto rank = [&](double r) { return sorted[static_cast<std::size_t>(std::clamp(r, 0.0, n - 1.0))]; };
    figures.arms.push_back({names[arm], median(per_call[arm]), median(sorted), rank(std::floor(n / 2 - half_width)),
                            rank(std::ceil(n / 2 + half_width)), rank(n / 4), rank(n * 3 / 4)});
  }
  return figures;
}

}  // namespace disttune::bench
