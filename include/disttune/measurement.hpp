// How candidates are measured: repetition counts, the statistic, the strategy.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

namespace disttune {

/// The statistic that turns a candidate's samples into one time.
enum class Statistic { median, mean, min };

/// Measurement settings of one tuning. Every rank must use the same settings; they are
/// part of the digest the ranks compare before tuning.
struct Measurement {
  int warmup_runs = 5;   ///< untimed runs before a candidate's timed runs (the spec: 5)
  int timed_runs = 10;   ///< timed runs per candidate (the spec: 10)
  Statistic statistic = Statistic::median;
  /// "exhaustive" (the spec's), "adaptive" or "converge"; empty: TRITON_DIST_AUTOTUNE_STRATEGY
  /// if set, else "converge" (docs/strategies.md).
  std::string strategy;
  /// Canonical JSON of the space entry to keep unless another is faster by more than the
  /// noise (any strategy); empty: none. A key whose candidates lack it (pruned) has none.
  std::string baseline;
  /// The strategy's own named parameters (as nvbench's criterion params), values as text,
  /// e.g. {{"effort", "quick"}, {"seed", "7"}} for search, {{"max_noise", "0.01"}} for
  /// converge. Each strategy declares its names with defaults and refuses any other name or
  /// a bad value with InvalidSetting when it is made; "seed" (an unsigned integer, default
  /// 0, the same on every rank) is taken by every built-in strategy (docs/strategies.md
  /// has the table of who owns which). Empty: the strategy's defaults.
  std::map<std::string, std::string> strategy_options;
};

/// The most warm-up or timed runs one candidate may be given (a bound, not a suggestion).
inline constexpr int kMostRuns = 1'000'000;

/// Throws InvalidSetting naming `setting` unless least <= count <= kMostRuns.
void validate_run_count(long long count, std::string_view setting, int least);

/// Throws InvalidSetting (a std::invalid_argument) naming the field when a setting is out of
/// range: warmup_runs in [0, kMostRuns], timed_runs in [1, kMostRuns]. The strategy's
/// options are checked by the strategy when it is made (make_strategy).
void validate(const Measurement& measurement);

/// "median", "mean" or "min"; parse_statistic throws InvalidSetting otherwise.
std::string to_string(Statistic statistic);
Statistic parse_statistic(const std::string& name);

/// The statistic of a non-empty list of samples (ms).
double summarize(std::span<const double> samples, Statistic statistic);

}  // namespace disttune
