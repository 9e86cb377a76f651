// Measurement settings: validation, statistic names, and the statistics themselves.
#include "disttune/measurement.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "disttune/error.hpp"

namespace disttune {

void validate_run_count(long long count, std::string_view setting, int least) {
  if (count < least || count > kMostRuns) {
    throw InvalidSetting("disttune: " + std::string(setting) + " must be between " +
                         std::to_string(least) + " and " + std::to_string(kMostRuns) + ", got " +
                         std::to_string(count));
  }
}

void validate(const Measurement& measurement) {
  validate_run_count(measurement.warmup_runs, "warmup_runs", 0);
  validate_run_count(measurement.timed_runs, "timed_runs", 1);
}

std::string to_string(Statistic statistic) {
  switch (statistic) {
    case Statistic::median: return "median";
    case Statistic::mean: return "mean";
    case Statistic::min: return "min";
  }
  throw std::invalid_argument("disttune: unknown statistic");
}

Statistic parse_statistic(const std::string& name) {
  if (name == "median") return Statistic::median;
  if (name == "mean") return Statistic::mean;
  if (name == "min") return Statistic::min;
  throw InvalidSetting("disttune: unknown statistic '" + name +
                              "' (expected median, mean or min)");
}

double summarize(std::span<const double> samples, Statistic statistic) {
  if (samples.empty()) throw std::invalid_argument("disttune: no samples to summarize");
  switch (statistic) {
    case Statistic::min: return *std::min_element(samples.begin(), samples.end());
    case Statistic::mean:
      return std::accumulate(samples.begin(), samples.end(), 0.0) /
             static_cast<double>(samples.size());
    case Statistic::median: {
      std::vector<double> sorted(samples.begin(), samples.end());
      std::sort(sorted.begin(), sorted.end());
      const std::size_t mid = sorted.size() / 2;
      return sorted.size() % 2 == 1 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
    }
  }
  throw std::invalid_argument("disttune: unknown statistic");
}

}  // namespace disttune
