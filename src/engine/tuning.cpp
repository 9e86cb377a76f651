// Tuning: the per-key state machine that schedules runs, keeps samples and picks the best.
#include "disttune/tuning.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <utility>

#include "report/readable_text.hpp"
#include "strategies/noise_interval.hpp"

namespace disttune {
namespace {

/// A candidate's place in the round: its warm-ups, one barrier, its timed runs. The warm-ups
/// need no barrier before them: only the timed runs of every rank must start together (a
/// communicating candidate's warm-ups meet in its own collectives). The collects of every
/// candidate come after the round's last run, so a device timer waits once per round.
enum class Phase { warmup, timed_barrier, timed, done };

/// Timed runs of one listing of a candidate in the round, collected at the round's end.
struct PendingCollect {
  std::size_t candidate = 0;
  int runs = 0;
};

constexpr double kFailedTime = std::numeric_limits<double>::infinity();
/// local_round_values(): time, noise, samples owed, and the last round's time and noise,
/// per candidate.
constexpr std::size_t kRoundValuesPerCandidate = 5;

/// Median absolute deviation over the median: a spread that one outlier does not move.
double relative_spread(const std::vector<double>& samples) {
  const double median = summarize(samples, Statistic::median);
  if (median <= 0.0) return 0.0;
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double sample : samples) deviations.push_back(std::abs(sample - median));
  return summarize(deviations, Statistic::median) / median;
}

std::vector<std::string> candidates_of(const std::vector<CandidateResult>& results) {
  std::vector<std::string> configs;
  configs.reserve(results.size());
  for (const CandidateResult& result : results) configs.push_back(result.config);
  return configs;
}

}  // namespace

struct Tuning::State {
  Measurement measurement;
  std::string strategy_name;
  std::unique_ptr<Strategy> strategy;
  std::vector<CandidateResult> results;
  std::vector<int> owed;     ///< valid samples each candidate still owes in this round (this rank)
  std::vector<int> retaken;  ///< agreed re-takes so far per candidate (the same on every rank)
  /// agree_preparation()'s values for the next standings; empty: every candidate prepared.
  std::vector<double> prepare_s;
  std::vector<std::size_t> round_start;  ///< each candidate's sample count when the strategy's round began
  std::vector<std::size_t> interleaved;  ///< the candidates of an interleaved strategy round (else empty)
  std::optional<std::size_t> baseline;   ///< index of measurement.baseline among the candidates
  std::optional<std::size_t> chosen;     ///< the choice, once finished

  Round round;
  std::vector<std::size_t> order;  ///< the round's candidates in run order, less those left out
  bool may_leave_out = false;      ///< the round allows leaving unstarted candidates out
  std::vector<bool> left_out;      ///< per candidate: left out of the strategy's last round
  std::size_t rounds_started = 0;
  std::size_t position = 0;  ///< index into order
  Phase phase = Phase::warmup;
  int run = 0;               ///< runs issued in the current phase
  std::vector<PendingCollect> to_collect;  ///< the round's timed runs, in order, until its end
  std::size_t collecting = 0;              ///< collect steps of to_collect issued
  bool awaiting_end_round = false;
  bool finished = false;

  /// A strategy's round: each of its candidates owes its timed runs. A re-take round keeps
  /// what the candidates owe.
  void start_round(Round next, bool retake) {
    check(next);
    if (!retake) {
      // A candidate listed several times (an interleaved round) owes runs for each listing.
      for (std::size_t c : next.candidates) owed.at(c) = 0;
      for (std::size_t c : next.candidates) owed.at(c) += next.timed_runs;
      round_start.clear();
      for (const CandidateResult& result : results) round_start.push_back(result.samples.size());
      std::vector<std::size_t> members(next.candidates);
      std::sort(members.begin(), members.end());
      members.erase(std::unique(members.begin(), members.end()), members.end());
      interleaved = members.size() < next.candidates.size() ? members : std::vector<std::size_t>{};
      left_out.assign(results.size(), false);
    }
    may_leave_out = !retake && interleaved.empty() && next.leave_unprepared.has_value();
    order = next.candidates;
    round = std::move(next);
    ++rounds_started;
    position = 0;
    phase = Phase::warmup;
    run = 0;
    to_collect.clear();
    collecting = 0;
    awaiting_end_round = false;
  }

  bool failed(std::size_t candidate) const { return results[candidate].failed; }

  /// Where in `order` the next step begins a candidate's turn (the current candidate's runs
  /// are all issued, or none is), or nullopt if it does not.
  std::optional<std::size_t> next_turn() const {
    if (position >= order.size()) return std::nullopt;
    if (phase == Phase::warmup && run == 0) return position;
    const bool ran = phase == Phase::done ||
                     (phase == Phase::timed && (failed(order[position]) || run >= round.timed_runs));
    if (ran && position + 1 < order.size()) return position + 1;
    return std::nullopt;
  }

  /// Ends the current candidate's turn if its runs are all issued (as next() would), so that
  /// position is next_turn().
  void close_turn() {
    if (next_turn() == position) return;
    if (phase == Phase::timed && run > 0) to_collect.push_back({order[position], run});
    ++position;
    phase = Phase::warmup;
    run = 0;
  }

  std::vector<double> round_samples(std::size_t candidate) const {
    const std::vector<double>& all = results[candidate].samples;
    return {all.begin() + static_cast<std::ptrdiff_t>(round_start[candidate]), all.end()};
  }

  /// Each candidate's samples since the strategy's round began (re-takes included). After
  /// an interleaved round, sample k of each of its candidates is divided by the mean of
  /// sample k of all of them (one pass of A B ...): a drift of the device common to a pass
  /// cancels, and the candidates compare by these paired ratios.
  std::vector<std::vector<double>> round_sample_lists() const {
    std::vector<std::vector<double>> lists(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) lists[i] = round_samples(i);
    if (interleaved.empty()) return lists;
    std::size_t passes = std::numeric_limits<std::size_t>::max();
    for (std::size_t c : interleaved) {
      if (!results[c].failed) passes = std::min(passes, lists[c].size());
    }
    if (passes == std::numeric_limits<std::size_t>::max()) return lists;
    std::vector<std::vector<double>> paired(results.size());
    for (std::size_t k = 0; k < passes; ++k) {
      double sum = 0.0;
      std::size_t count = 0;
      for (std::size_t c : interleaved) {
        if (!results[c].failed) sum += lists[c][k], ++count;
      }
      const double mean = sum / static_cast<double>(count);
      for (std::size_t c : interleaved) {
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

  /// Refuses a strategy's round that would index outside the candidates, with negative
  /// counts, or whose candidates are neither ascending nor passes of one ascending list
  /// (A B A B ...: an interleaved round; an end round's finalists must be ascending).
  void check(const Round& next) const {
    std::string problem;
    if (next.warmup_runs < 0 || next.timed_runs < 0) problem = "negative run counts";
    std::vector<std::size_t> pass(next.candidates);
    std::sort(pass.begin(), pass.end());
    pass.erase(std::unique(pass.begin(), pass.end()), pass.end());
    const bool passes = next.timed_runs > 0 && !pass.empty() && pass.size() < next.candidates.size();
    for (std::size_t i = 0; i < next.candidates.size() && problem.empty(); ++i) {
      if (next.candidates[i] >= results.size()) {
        problem = "candidate " + std::to_string(next.candidates[i]) + " of " + std::to_string(results.size());
      } else if (passes ? next.candidates[i] != pass[i % pass.size()]
                             : i > 0 && next.candidates[i] <= next.candidates[i - 1]) {
        problem = passes ? "an interleaved round that is not passes of one ascending list"
                              : "candidates not in ascending order";
      }
    }
    if (passes && next.candidates.size() % pass.size() != 0 && problem.empty()) {
      problem = "an interleaved round that is not passes of one ascending list";
    }
    if (!problem.empty()) {
      throw std::logic_error("disttune: strategy '" + strategy_name + "' returned a bad round: " + problem);
    }
  }

  void fail(std::size_t candidate, std::string reason) {
    CandidateResult& result = results.at(candidate);
    if (result.failed) return;
    result.failed = true;
    result.measured = true;
    result.error = detail::readable_text(reason);  // records, logs and tables need UTF-8
  }

  /// The re-take round for what the candidates owe by agreement, or nullopt if none owes.
  /// A candidate beyond timed_runs re-takes in all fails instead.
  std::optional<Round> retake_round(std::span<const double> agreed_owed) {
    Round retakes;
    for (std::size_t c = 0; c < results.size(); ++c) {
      if (!results[c].measured || results[c].failed || agreed_owed[c] <= 0.0) continue;
      const int owing = static_cast<int>(agreed_owed[c]);
      retaken[c] += owing;
      if (retaken[c] > measurement.timed_runs) {
        fail(c, "more than " + std::to_string(measurement.timed_runs) +
                    " invalid times (negative or non-finite)");
        continue;
      }
      retakes.candidates.push_back(c);
      retakes.timed_runs = std::max(retakes.timed_runs, owing);
    }
    if (retakes.candidates.empty()) return std::nullopt;
    return retakes;
  }
};

Tuning::Tuning(std::vector<std::string> candidates, Measurement measurement, std::vector<std::size_t> prior,
               std::size_t compile_threads)
    : state_(std::make_unique<State>()) {
  if (candidates.empty()) throw std::invalid_argument("disttune: a tuning needs at least one candidate");
  if (compile_threads < 1) throw std::invalid_argument("disttune: a tuning needs at least one compile thread");
  for (std::size_t index : prior) {
    if (index >= candidates.size()) {
      throw std::invalid_argument("disttune: prior names candidate " + std::to_string(index) + " of " +
                                  std::to_string(candidates.size()));
    }
  }
  validate(measurement);
  state_->measurement = measurement;
  state_->strategy_name = strategy_name(measurement);
  state_->strategy = prior.empty() ? make_strategy(measurement) : make_warm_start_strategy(measurement);
  state_->results.resize(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) state_->results[i].config = std::move(candidates[i]);
  state_->owed.assign(candidates.size(), 0);
  state_->retaken.assign(candidates.size(), 0);
  if (!measurement.baseline.empty()) {
    for (std::size_t i = 0; i < state_->results.size(); ++i) {
      if (state_->results[i].config == measurement.baseline) state_->baseline = i;
    }
  }
  state_->strategy->begin(
      SpaceInfo{candidates_of(state_->results), std::move(prior), strategy_seed(measurement), compile_threads});
  state_->start_round(state_->strategy->first_round(state_->results.size()), false);
}

Tuning::~Tuning() = default;
Tuning::Tuning(Tuning&&) noexcept = default;
Tuning& Tuning::operator=(Tuning&&) noexcept = default;

std::optional<Step> Tuning::next() {
  State& s = *state_;
  if (s.finished) return std::nullopt;
  while (true) {
    if (s.position >= s.order.size()) {
      if (s.collecting < s.to_collect.size()) {
        const PendingCollect& pending = s.to_collect[s.collecting++];
        return Step{StepKind::collect, pending.candidate, 0, pending.runs};
      }
      s.awaiting_end_round = true;
      return Step{StepKind::round_end, 0, 0, 0};
    }
    const std::size_t c = s.order[s.position];
    switch (s.phase) {
      case Phase::warmup:
        if (!s.failed(c) && s.run < s.round.warmup_runs) {
          return Step{StepKind::warmup, c, s.run++, s.round.warmup_runs};
        }
        s.phase = Phase::timed_barrier;
        continue;
      case Phase::timed_barrier:
        s.phase = Phase::timed;
        s.run = 0;
        return Step{StepKind::barrier, c, 0, s.round.timed_runs};
      case Phase::timed:
        if (!s.failed(c) && s.run < s.round.timed_runs) {
          return Step{StepKind::timed, c, s.run++, s.round.timed_runs};
        }
        s.phase = Phase::done;
        if (s.run > 0) s.to_collect.push_back({c, s.run});
        continue;
      case Phase::done:
        ++s.position;
        s.phase = Phase::warmup;
        s.run = 0;
        continue;
    }
  }
}

void Tuning::record_sample(std::size_t candidate, double ms) {
  State& s = *state_;
  CandidateResult& result = s.results.at(candidate);
  if (result.failed) return;
  result.measured = true;
  if (!std::isfinite(ms) || ms < 0.0) return;  // still owed: re-taken after the round
  // A rank that owes nothing more ran only to keep in step with a rank that re-takes.
  if (s.owed[candidate] <= 0) return;
  --s.owed[candidate];
  result.samples.push_back(ms);
}

void Tuning::batch_timed_phase() {
  State& s = *state_;
  if (s.phase != Phase::timed || s.run != 1) {
    throw std::logic_error("disttune: batch_timed_phase() not right after a phase's first timed step");
  }
  s.run = s.round.timed_runs;
}

void Tuning::record_failure(std::size_t candidate, std::string reason) {
  state_->fail(candidate, std::move(reason));
}

std::vector<double> Tuning::local_round_values() const {
  const std::size_t count = state_->results.size();
  const std::vector<std::vector<double>> recent_lists = state_->round_sample_lists();
  std::vector<double> values(kRoundValuesPerCandidate * count, 0.0);
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
    values[2 * count + i] = result.measured ? state_->owed[i] : 0;
    const std::vector<double>& recent = recent_lists[i];
    if (!recent.empty()) {
      values[3 * count + i] = summarize(recent, state_->measurement.statistic);
      values[4 * count + i] = relative_spread(recent);
    }
  }
  return values;
}

void Tuning::end_round(const std::vector<double>& agreed_values) {
  State& s = *state_;
  const std::size_t count = s.results.size();
  if (!s.awaiting_end_round) throw std::logic_error("disttune: end_round() before the round ended");
  if (agreed_values.size() != kRoundValuesPerCandidate * count) {
    throw std::invalid_argument("disttune: end_round() got " + std::to_string(agreed_values.size()) +
                                " values for " + std::to_string(count) + " candidates (expected " +
                                std::to_string(kRoundValuesPerCandidate * count) + ")");
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
    standings[i] = {result.failed, result.agreed_ms, result.noise,
                    static_cast<int>(result.samples.size()), agreed_values[3 * count + i],
                    agreed_values[4 * count + i], static_cast<int>(recent_lists[i].size())};
  }
  for (std::size_t i = 0; i < count; ++i) {
    standings[i].baseline = s.baseline == i;
    standings[i].left_out = s.left_out[i];
    if (!s.prepare_s.empty()) {
      standings[i].prepared = !std::isinf(s.prepare_s[i]);
      standings[i].prepare_s = standings[i].prepared ? s.prepare_s[i] : 0.0;
    }
  }
  if (std::optional<Round> retakes = s.retake_round(std::span(agreed_values).subspan(2 * count, count))) {
    s.start_round(std::move(*retakes), true);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) standings[i].failed = s.results[i].failed;
  Round next = s.strategy->next_round(standings);
  if (next.timed_runs > 0) {
    s.start_round(std::move(next), false);
    return;
  }
  s.check(next);
  s.finish(next);
}

void Tuning::agree_preparation(std::vector<double> agreed_prepare_s) {
  if (agreed_prepare_s.size() != state_->results.size()) {
    throw std::invalid_argument("disttune: agree_preparation() got " + std::to_string(agreed_prepare_s.size()) +
                                " values for " + std::to_string(state_->results.size()) + " candidates");
  }
  state_->prepare_s = std::move(agreed_prepare_s);
}

std::vector<std::size_t> Tuning::unstarted() const {
  const State& s = *state_;
  const std::optional<std::size_t> turn = s.next_turn();
  if (!s.may_leave_out || !turn) return {};
  return {s.order.begin() + static_cast<std::ptrdiff_t>(*turn), s.order.end()};
}

std::size_t Tuning::started() const {
  const State& s = *state_;
  const std::optional<std::size_t> turn = s.next_turn();
  return turn ? *turn : std::min(s.order.size(), s.position + 1);
}

void Tuning::leave_out(std::size_t candidate) {
  State& s = *state_;
  const std::vector<std::size_t> waiting = unstarted();
  if (std::find(waiting.begin(), waiting.end(), candidate) == waiting.end())
    throw std::logic_error("disttune: leave_out() of candidate " + std::to_string(candidate) + ", not unstarted");
  s.close_turn();
  s.order.erase(std::find(s.order.begin() + static_cast<std::ptrdiff_t>(s.position), s.order.end(), candidate));
  s.left_out[candidate] = true;
  s.owed[candidate] = 0;
}

bool Tuning::finished() const { return state_->finished; }
const Round& Tuning::current_round() const { return state_->round; }
std::size_t Tuning::rounds_started() const { return state_->rounds_started; }
std::vector<std::size_t> Tuning::ahead() const { return state_->strategy->ahead(); }
const Measurement& Tuning::measurement() const { return state_->measurement; }
const std::vector<CandidateResult>& Tuning::results() const { return state_->results; }
std::optional<std::size_t> Tuning::baseline() const { return state_->baseline; }

std::optional<std::size_t> Tuning::best() const {
  if (!state_->finished) throw std::logic_error("disttune: best() before the tuning finished");
  return state_->chosen;
}

}  // namespace disttune
