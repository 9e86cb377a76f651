// Tuning: the per-key state machine that schedules runs, keeps samples and picks the best.
#include "disttune/tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <utility>

#include "noise_interval.hpp"

namespace disttune {
namespace {

enum class Phase { warmup_barrier, warmup, timed_barrier, timed, collect };

constexpr double kFailedTime = std::numeric_limits<double>::infinity();
/// Agreed values per candidate at a round's end: time, noise, last round's time and noise.
constexpr std::size_t kValuesPerCandidate = 4;

/// Median absolute deviation over the median: a spread that one outlier does not move.
double relative_spread(const std::vector<double>& samples) {
  const double median = summarize(samples, Statistic::median);
  if (median <= 0.0) return 0.0;
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double sample : samples) deviations.push_back(std::abs(sample - median));
  return summarize(deviations, Statistic::median) / median;
}

}  // namespace

struct Tuning::State {
  Measurement measurement;
  std::unique_ptr<Strategy> strategy;
  std::vector<CandidateResult> results;
  std::vector<int> retakes;  ///< invalid samples seen per candidate (each earns a re-take)
  std::vector<std::size_t> round_start;  ///< each candidate's sample count when the round began
  std::optional<std::size_t> baseline;   ///< index of measurement.baseline among the candidates
  std::optional<std::size_t> chosen;     ///< the choice, once finished

  Round round;
  std::size_t position = 0;  ///< index into round.candidates
  Phase phase = Phase::warmup_barrier;
  int run = 0;               ///< runs issued in the current phase
  int timed_target = 0;      ///< timed runs this candidate owes in this round (grows on re-takes)
  int collected = 0;         ///< timed runs of this candidate already collected
  bool awaiting_end_round = false;
  bool finished = false;

  void start_round(Round next) {
    round = std::move(next);
    position = 0;
    phase = Phase::warmup_barrier;
    awaiting_end_round = false;
    round_start.clear();
    for (const CandidateResult& result : results) round_start.push_back(result.samples.size());
  }

  std::vector<double> round_samples(std::size_t candidate) const {
    const std::vector<double>& all = results[candidate].samples;
    return {all.begin() + static_cast<std::ptrdiff_t>(round_start[candidate]), all.end()};
  }

  /// Each candidate's samples of this round. In an interleaved round (a candidate listed
  /// more than once), sample k of each candidate is divided by the mean of sample k of all
  /// its candidates (one pass of A B ...): a drift of the device common to a pass cancels,
  /// and the candidates compare by these paired ratios.
  std::vector<std::vector<double>> round_sample_lists() const {
    std::vector<std::vector<double>> lists(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) lists[i] = round_samples(i);
    std::vector<std::size_t> members(round.candidates);
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (members.size() == round.candidates.size()) return lists;
    std::size_t passes = std::numeric_limits<std::size_t>::max();
    for (std::size_t c : members) {
      if (!results[c].failed) passes = std::min(passes, lists[c].size());
    }
    if (passes == std::numeric_limits<std::size_t>::max()) return lists;
    std::vector<std::vector<double>> paired(results.size());
    for (std::size_t k = 0; k < passes; ++k) {
      double sum = 0.0;
      std::size_t count = 0;
      for (std::size_t c : members) {
        if (!results[c].failed) sum += lists[c][k], ++count;
      }
      const double mean = sum / static_cast<double>(count);
      for (std::size_t c : members) {
        if (!results[c].failed && mean > 0.0) paired[c].push_back(lists[c][k] / mean);
      }
    }
    return paired;
  }

  /// Marks the finalists, and decides: the strategy's choice, else the lowest agreed time
  /// unless the baseline is within noise of it.
  void finish(const Round& end) {
    finished = true;
    awaiting_end_round = false;
    std::vector<bool> finalist(results.size(), false);
    std::vector<std::size_t> alive;
    std::vector<detail::TimeEstimate> estimates;
    for (std::size_t c : end.candidates) finalist.at(c) = true;
    for (std::size_t i = 0; i < results.size(); ++i) {
      CandidateResult& result = results[i];
      result.dropped = result.measured && !result.failed && !finalist[i];
      estimates.push_back({result.agreed_ms, result.noise, static_cast<int>(result.samples.size())});
      if (finalist[i] && result.measured && !result.failed) alive.push_back(i);
    }
    detail::NoiseChoice choice{end.chosen, end.within_noise};
    if (!end.chosen) choice = detail::choose_within_noise(estimates, alive, baseline, 0.0);
    if (choice.chosen && (results.at(*choice.chosen).failed || !finalist[*choice.chosen])) {
      throw std::logic_error("disttune: the strategy chose a candidate that is not a finalist");
    }
    chosen = choice.chosen;
    for (std::size_t c : choice.within_noise) results.at(c).within_noise = true;
  }

  bool failed(std::size_t candidate) const { return results[candidate].failed; }
};

Tuning::Tuning(std::vector<std::string> candidates, Measurement measurement)
    : state_(std::make_unique<State>()) {
  if (candidates.empty()) throw std::invalid_argument("disttune: a tuning needs at least one candidate");
  validate(measurement);
  state_->measurement = measurement;
  state_->strategy = make_strategy(measurement);
  state_->results.resize(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) state_->results[i].config = std::move(candidates[i]);
  state_->retakes.assign(candidates.size(), 0);
  if (!measurement.baseline.empty()) {
    for (std::size_t i = 0; i < state_->results.size(); ++i) {
      if (state_->results[i].config == measurement.baseline) state_->baseline = i;
    }
  }
  state_->start_round(state_->strategy->first_round(candidates.size()));
}

Tuning::~Tuning() = default;
Tuning::Tuning(Tuning&&) noexcept = default;
Tuning& Tuning::operator=(Tuning&&) noexcept = default;

std::optional<Step> Tuning::next() {
  State& s = *state_;
  if (s.finished) return std::nullopt;
  while (true) {
    if (s.position >= s.round.candidates.size()) {
      s.awaiting_end_round = true;
      return Step{StepKind::round_end, 0, 0, 0, false};
    }
    const std::size_t c = s.round.candidates[s.position];
    switch (s.phase) {
      case Phase::warmup_barrier:
        s.phase = Phase::warmup;
        s.run = 0;
        return Step{StepKind::barrier, c, 0, s.round.warmup_runs, false};
      case Phase::warmup:
        if (!s.failed(c) && s.run < s.round.warmup_runs) {
          return Step{StepKind::warmup, c, s.run++, s.round.warmup_runs, false};
        }
        s.phase = Phase::timed_barrier;
        continue;
      case Phase::timed_barrier:
        s.phase = Phase::timed;
        s.run = 0;
        s.collected = 0;
        s.timed_target = s.round.timed_runs;
        return Step{StepKind::barrier, c, 0, s.round.timed_runs, true};
      case Phase::timed:
        if (!s.failed(c) && s.run < s.timed_target) {
          return Step{StepKind::timed, c, s.run++, s.timed_target, false};
        }
        s.phase = Phase::collect;
        if (s.run > s.collected) {
          const int pending = s.run - s.collected;
          s.collected = s.run;
          return Step{StepKind::collect, c, 0, pending, false};
        }
        continue;
      case Phase::collect:
        // After a collect: re-takes earned by invalid samples extend the timed phase.
        if (!s.failed(c) && s.run < s.timed_target) {
          s.phase = Phase::timed;
          continue;
        }
        ++s.position;
        s.phase = Phase::warmup_barrier;
        continue;
    }
  }
}

void Tuning::record_sample(std::size_t candidate, double ms) {
  State& s = *state_;
  CandidateResult& result = s.results.at(candidate);
  if (result.failed) return;
  result.measured = true;
  if (std::isfinite(ms) && ms >= 0.0) {
    result.samples.push_back(ms);
    return;
  }
  if (++s.retakes[candidate] > s.measurement.timed_runs) {
    record_failure(candidate, "more than " + std::to_string(s.measurement.timed_runs) +
                                  " invalid (negative or non-finite) timings");
    return;
  }
  if (s.position < s.round.candidates.size() && s.round.candidates[s.position] == candidate) {
    ++s.timed_target;
  }
}

void Tuning::record_failure(std::size_t candidate, std::string reason) {
  CandidateResult& result = state_->results.at(candidate);
  if (result.failed) return;
  result.failed = true;
  result.measured = true;
  result.error = std::move(reason);
}

std::vector<double> Tuning::local_round_values() const {
  const std::size_t count = state_->results.size();
  const std::vector<std::vector<double>> recent_lists = state_->round_sample_lists();
  std::vector<double> values(kValuesPerCandidate * count, 0.0);
  for (std::size_t i = 0; i < count; ++i) {
    const CandidateResult& result = state_->results[i];
    if (result.failed) {
      values[i] = kFailedTime;
      continue;
    }
    if (!result.samples.empty()) {
      values[i] = summarize(result.samples, state_->measurement.statistic);
      values[count + i] = relative_spread(result.samples);
    }
    const std::vector<double>& recent = recent_lists[i];
    if (!recent.empty()) {
      values[2 * count + i] = summarize(recent, state_->measurement.statistic);
      values[3 * count + i] = relative_spread(recent);
    }
  }
  return values;
}

void Tuning::end_round(const std::vector<double>& agreed_values) {
  State& s = *state_;
  const std::size_t count = s.results.size();
  if (!s.awaiting_end_round) throw std::logic_error("disttune: end_round() before the round ended");
  if (agreed_values.size() != kValuesPerCandidate * count) {
    throw std::invalid_argument("disttune: end_round() got " + std::to_string(agreed_values.size()) +
                                " values for " + std::to_string(count) + " candidates (expected " +
                                std::to_string(kValuesPerCandidate * count) + ")");
  }
  const std::vector<double> local = local_round_values();
  const std::vector<std::vector<double>> recent_lists = s.round_sample_lists();
  const std::span<const double> agreed_times(agreed_values.data(), count);
  std::vector<CandidateStanding> standings(s.results.size());
  for (std::size_t i = 0; i < s.results.size(); ++i) {
    CandidateResult& result = s.results[i];
    if (!result.measured) continue;
    result.local_ms = result.failed ? 0.0 : local[i];
    result.agreed_ms = agreed_times[i];
    result.noise = agreed_values[count + i];
    if (std::isinf(agreed_times[i]) && !result.failed) {
      result.failed = true;
      result.error = "failed on another rank";
    }
    const int recent = static_cast<int>(recent_lists[i].size());
    standings[i] = {result.failed, result.agreed_ms, result.noise,
                    static_cast<int>(result.samples.size()), agreed_values[2 * count + i],
                    agreed_values[3 * count + i], recent};
  }
  for (std::size_t i = 0; i < count; ++i) standings[i].baseline = s.baseline == i;
  Round next = s.strategy->next_round(standings);
  if (next.timed_runs > 0) {
    s.start_round(std::move(next));
    return;
  }
  s.finish(next);
}

bool Tuning::finished() const { return state_->finished; }
const Measurement& Tuning::measurement() const { return state_->measurement; }
const std::vector<CandidateResult>& Tuning::results() const { return state_->results; }
std::optional<std::size_t> Tuning::baseline() const { return state_->baseline; }

std::optional<std::size_t> Tuning::best() const {
  if (!state_->finished) throw std::logic_error("disttune: best() before the tuning finished");
  return state_->chosen;
}

}  // namespace disttune
