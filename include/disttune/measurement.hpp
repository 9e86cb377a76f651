// How candidates are measured: repetition counts, the statistic, the strategy.
#pragma once

#include <span>
#include <string>

namespace disttune {

/// The statistic that turns a candidate's samples into one time.
enum class Statistic { median, mean, min };

/// Measurement settings of one tuning. Every rank must use the same settings; they are
/// part of the digest the ranks compare before tuning.
struct Measurement {
  int warmup_runs = 5;   ///< untimed runs before a candidate's timed runs (the spec: 5)
  int timed_runs = 10;   ///< timed runs per candidate (the spec: 10)
  Statistic statistic = Statistic::median;
  /// "exhaustive" (the spec's) or "adaptive"; empty: TRITON_DIST_AUTOTUNE_STRATEGY if set,
  /// else "exhaustive".
  std::string strategy;
};

/// Throws std::invalid_argument naming the field when a setting is out of range.
void validate(const Measurement& measurement);

/// "median", "mean" or "min"; parse_statistic throws std::invalid_argument otherwise.
std::string to_string(Statistic statistic);
Statistic parse_statistic(const std::string& name);

/// The statistic of a non-empty list of samples (ms).
double summarize(std::span<const double> samples, Statistic statistic);

}  // namespace disttune
