// Tuning: the state machine that measures candidates for one key and picks the best.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "disttune/candidate_result.hpp"
#include "disttune/measurement.hpp"
#include "disttune/strategy.hpp"

namespace disttune {

/// What a driver must do next.
enum class StepKind {
  barrier,    ///< all ranks meet before `candidate`'s timed runs (no-op on one rank)
  warmup,     ///< run `candidate` once, untimed
  timed,      ///< run `candidate` once between timer marks (its sample is recorded at collect)
  collect,    ///< record_sample() each of `candidate`'s `count` timed samples of one listing, in order
  round_end,  ///< all ranks: reduce local_round_values() with MAX, then call end_round()
};

// A round's runs are issued candidate by candidate: each one's warm-ups, one barrier, then
// its timed runs (one barrier per candidate and round: the timed runs of every rank start
// together). After the round's last run come the collects, one per listing of a candidate
// that made timed runs, in the order of the runs, then the round's end: a device timer
// resolves the whole round with one wait, and the host stays ahead of the device in
// between. Drivers follow the steps and never assume that order, so a schedule that pairs
// near-tied candidates (A B A B ...) can be added to Round and next() alone.

struct Step {
  StepKind kind = StepKind::round_end;
  std::size_t candidate = 0;  ///< index into the candidate list
  int index = 0;              ///< ordinal of this run within its phase
  int count = 0;              ///< runs in this phase (barrier: timed runs of the phase it opens)
};

/// The state machine of one tuning. A driver (src/engine/round_driver.hpp) loops: next(),
/// do the step, report. Failed candidates keep their barrier steps so that every rank makes
/// the same collectives. Re-takes of invalid samples are agreed at a round's end, so every
/// rank makes the same runs: see record_sample(). Not thread-safe: one driver at a time.
class Tuning {
 public:
  /// `candidates` are canonical JSON texts; there must be at least one. The strategy's
  /// begin() gets them with `prior` (each in range, else std::invalid_argument) and
  /// strategy_seed(measurement), before its first round. A non-empty `prior` (candidates
  /// ranked best-first from neighbouring keys' records) warm-starts the tuning: its strategy
  /// is make_warm_start_strategy()'s. `compile_threads` (at least 1, else
  /// std::invalid_argument): how many candidates the front end prepares at once, for the
  /// strategy's SpaceInfo.
  Tuning(std::vector<std::string> candidates, Measurement measurement,
         std::vector<std::size_t> prior = {}, std::size_t compile_threads = kDefaultCompileThreads);
  ~Tuning();
  Tuning(Tuning&&) noexcept;
  Tuning& operator=(Tuning&&) noexcept;

  /// The next step, or nullopt when the tuning is finished.
  std::optional<Step> next();

  /// A timed sample (ms) of `candidate`. Ignored for a failed candidate. A non-finite or
  /// negative sample is not a time: it is discarded and the candidate owes one sample. At
  /// the round's end the ranks agree (MAX) on what each candidate owes; before the strategy
  /// sees the round, a re-take round gives every rank that many more timed runs of those
  /// candidates (a rank that owes fewer keeps only what it owes). Beyond timed_runs
  /// re-takes in all, the candidate fails on every rank.
  void record_sample(std::size_t candidate, double ms);

  /// The timed runs of the current timed phase were timed as one batch (e.g. a CUDA-graph
  /// replay) by the driver after it got the phase's first timed step: the phase's other
  /// timed steps are not issued; the phase's collect at the round's end counts all of them.
  void batch_timed_phase();

  /// `candidate` failed on this rank; its remaining runs are skipped.
  void record_failure(std::size_t candidate, std::string reason);

  /// This rank's numbers for the round just ended, 5 per candidate: first every candidate's
  /// time (its statistic; +inf if it failed here), then every candidate's noise (relative
  /// spread of its samples), then the samples it still owes after invalid ones, then the
  /// time and noise of the samples of the strategy's last round only (paired ratios after an
  /// interleaved round). Reduce them element-wise with MAX across ranks (one all-reduce) and
  /// pass the result to end_round().
  std::vector<double> local_round_values() const;

  /// Applies the agreed values (an +inf time marks a candidate failed on some rank) and
  /// starts the next round: a re-take round if a candidate owes samples, else the strategy's.
  void end_round(const std::vector<double>& agreed_values);

  /// Before end_round(): each candidate's preparation as the ranks agreed on it (MAX): +inf
  /// if it was not prepared on some rank when the round ended, else the seconds it took
  /// (0: not known). The strategy's next standings carry it (CandidateStanding::prepared,
  /// prepare_s); without this call every candidate stands prepared. std::invalid_argument
  /// for a count other than the candidates'.
  void agree_preparation(std::vector<double> agreed_prepare_s);

  /// The candidates of the current round whose turn has not begun, in list order, when the
  /// next step begins a turn (else empty); always empty unless the round may leave
  /// candidates out (Round::leave_unprepared, not an interleaved or re-take round).
  std::vector<std::size_t> unstarted() const;
  /// Candidates of the current round whose turn has begun (or were left out).
  std::size_t started() const;
  /// Leaves `candidate`, one of unstarted(), out of the round: it makes no runs in it, and
  /// the strategy's next standings mark it left_out; the others keep their order.
  /// std::logic_error otherwise.
  void leave_out(std::size_t candidate);

  bool finished() const;
  /// The round being run: the strategy's, or a re-take round; its candidates in run order.
  const Round& current_round() const;
  /// Rounds started so far, re-take rounds included: it changes exactly when
  /// current_round() becomes another round.
  std::size_t rounds_started() const;
  /// The strategy's guess of the candidates it wants after the current round, most likely
  /// first (Strategy::ahead()), for a front end that prepares candidates ahead.
  std::vector<std::size_t> ahead() const;
  const Measurement& measurement() const;
  const std::vector<CandidateResult>& results() const;

  /// The choice: the strategy's, else the lowest agreed time among the finalists that did
  /// not fail (ties to the lowest index) unless the baseline is within noise of it, then the
  /// baseline. nullopt if all of them failed. Only once finished.
  std::optional<std::size_t> best() const;

  /// The index of measurement().baseline among the candidates; nullopt if it is not set or
  /// not among them (pruned for this key).
  std::optional<std::size_t> baseline() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace disttune
