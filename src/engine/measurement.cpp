// Measurement settings: validation, statistic names, and the statistics themselves.
#include "disttune/measurement.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace disttune {

void validate(const Measurement& measurement) {
  if (measurement.warmup_runs < 0) {
    throw std::invalid_argument("disttune: warmup_runs must be >= 0, got " +
                                std::to_string(measurement.warmup_runs));
  }
  if (measurement.timed_runs < 1) {
    throw std::invalid_argument("disttune: timed_runs must be >= 1, got " +
                                std::to_string(measurement.timed_runs));
  }
  if (!(measurement.max_noise > 0.0 && measurement.max_noise < 1.0)) {
    throw std::invalid_argument("disttune: max_noise must be in (0, 1), got " +
                                std::to_string(measurement.max_noise));
  }
  if (!(measurement.min_time_ms >= 0.0 && std::isfinite(measurement.min_time_ms))) {
    throw std::invalid_argument("disttune: min_time_ms must be finite and >= 0, got " +
                                std::to_string(measurement.min_time_ms));
  }
  if (!(measurement.budget_ms >= 0.0 && std::isfinite(measurement.budget_ms))) {
    throw std::invalid_argument("disttune: budget_ms must be finite and >= 0 (0: no budget), got " +
                                std::to_string(measurement.budget_ms));
  }
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
  throw std::invalid_argument("disttune: unknown statistic '" + name +
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
