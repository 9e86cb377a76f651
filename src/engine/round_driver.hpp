// RoundDriver: the one protocol of a tuning's rounds across ranks, for every kind of driver.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/rank_agreement.hpp"
#include "disttune/communicator.hpp"
#include "disttune/tuning.hpp"

namespace disttune::detail {

/// What a collect resolved for one candidate: its samples, in order, or why its runs have none.
struct CollectedRuns {
  std::vector<double> samples;
  std::string error;  ///< non-empty: the timer could not time these runs (the candidate fails)
};

/// The front end's side of the runs: batches, and the samples of the runs it timed.
class RunSite {
 public:
  virtual ~RunSite() = default;
  /// Times a whole timed phase (`runs` runs of `candidate`) at once, e.g. as a CUDA-graph
  /// replay, and returns its `runs` samples (ms); nullopt: the runs come one step at a time.
  /// May throw: the candidate then fails with the message.
  virtual std::optional<std::vector<double>> time_batch(std::size_t candidate, int runs) = 0;
  /// The samples (ms) of the runs timed one by one since the last collect, each candidate's
  /// in order, by candidate. Called once per round, after its last run (one wait for the
  /// device). A candidate with an error fails with "timer: <error>"; if this throws, every
  /// candidate with runs to collect fails with "timer: <message>".
  virtual std::map<std::size_t, CollectedRuns> collect() = 0;
  /// Readies `candidate` (e.g. compiles it) before its first run in `tuning`'s current round;
  /// returns why it cannot run (it then fails like a failed run), or empty text. May throw,
  /// with the same effect. The default: always ready.
  virtual std::string prepare(const Tuning& tuning, std::size_t candidate) {
    (void)tuning;
    (void)candidate;
    return {};
  }
  /// Whether `candidate` is prepared now, without waiting: nullopt if not (its compile is
  /// queued or running, or was never asked for), else the seconds its preparation took (0:
  /// not known). The driver agrees on it across ranks at each round's end, for the
  /// strategy's standings. The default: prepared, time not known.
  virtual std::optional<double> prepared(std::size_t candidate) {
    (void)candidate;
    return 0.0;
  }
  /// Whether prepared() can answer "not prepared" (a compile still running); without it no
  /// round leaves a candidate out (Round::leave_unprepared). The default: false.
  virtual bool tells_prepared() const { return false; }
  /// A round that may leave unprepared candidates out begins: start preparing its candidates
  /// (and what the strategy names ahead) without waiting for any. The default: nothing.
  virtual void prepare_round(const Tuning& tuning) { (void)tuning; }
  /// The clock of the waits below, in seconds. The default: std::chrono::steady_clock.
  virtual double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  /// Returns once one of `candidates` (none prepared here, at least one) is prepared here, or
  /// at `until_s` on now_s()'s clock, whichever comes first. The default: prepares the first
  /// of them.
  virtual void wait_prepared(const Tuning& tuning, const std::vector<std::size_t>& candidates, double until_s) {
    (void)until_s;
    (void)prepare(tuning, candidates.front());
  }
};

/// Watches a driven tuning (logs, progress, traces). Every method does nothing by default.
class RoundObserver {
 public:
  virtual ~RoundObserver() = default;
  /// Each step as the driver takes it from the Tuning, before it is done.
  virtual void step(const Step& step) { (void)step; }
  /// After a collect: this rank's samples of `candidate` and its result so far.
  virtual void collected(std::size_t candidate, const std::vector<double>& samples,
                         const CandidateResult& result) {
    (void)candidate;
    (void)samples;
    (void)result;
  }
  /// After the ranks agreed on a round's numbers.
  virtual void round_ended(const Tuning& tuning) { (void)tuning; }
};

/// Whether the driver makes a barrier when it meets it, or counts it as owed (made later by
/// settle_owed_barriers(), the same count on every rank).
enum class Barriers { make, owe };

/// Owns a round's protocol: the site's prepare before a candidate's first run of a round (in
/// a round that allows it, candidates prepared on every rank first and the others left out
/// rather than waited for: Round::leave_unprepared), a
/// barrier before each candidate's timed runs, batches standing for a timed phase, one
/// collect of the round's samples after its last run, agreed re-takes (Tuning), the MAX
/// all-reduce at a round's end, failures. A front end only makes the runs it is handed: function level all of them
/// in one call (drive()), contextual mode one per outer run (next_run()), replay tests with
/// recorded samples. Every rank makes the same collectives whatever failed where; strategies only
/// ever see the agreed numbers, so a new one needs no change here or in the front ends.
class RoundDriver {
 public:
  /// Keeps references: all of them must outlive the driver.
  RoundDriver(Tuning& tuning, Communicator& comm, ContextMaker context, RunSite& site,
              RoundObserver& observer);

  /// Does every step up to the next run the front end must make (warm-up or timed) and
  /// returns it; nullopt once the tuning finished.
  std::optional<Step> next_run(Barriers barriers = Barriers::make);
  /// Makes the barriers counted while next_run(Barriers::owe).
  void settle_owed_barriers();
  /// The run last returned by next_run() failed on this rank: its candidate's remaining
  /// runs are skipped (its barriers and the round's reduce are still made).
  void fail_run(const Step& run, std::string reason);
  /// Drives the tuning to its end in this call; `run(step)` makes each run, and an exception
  /// from it fails that run's candidate.
  void drive(const std::function<void(const Step&)>& run);

  const Tuning& tuning() const { return tuning_; }

 private:
  /// Asks the site to prepare `candidate`; false (and the candidate failed) if it cannot run.
  bool prepare(std::size_t candidate);
  /// Before a turn of a round that may leave candidates out (Round::leave_unprepared): the
  /// next candidate in order runs once it is prepared on every rank; meanwhile the driver
  /// waits here for one more compile, within its patience once enough of the round is
  /// prepared, and asks again; once every rank's patience ran out, the unstarted candidates
  /// not prepared on every rank are left out.
  void choose_turn();
  /// Marks the unstarted candidates prepared on every rank and returns those not prepared
  /// here, and whether any rank is `patient` (one MAX all-reduce).
  std::pair<std::vector<std::size_t>, bool> agree_prepared(const std::vector<std::size_t>& unstarted, bool patient);
  void barrier(const Step& step, Barriers barriers);
  void collect(const Step& step);
  void end_round();

  Tuning& tuning_;
  Communicator& comm_;
  ContextMaker context_;
  RunSite& site_;
  RoundObserver& observer_;
  /// The round's samples by candidate (batches' and the site's collect), until their collect
  /// steps take them.
  std::map<std::size_t, std::vector<double>> round_samples_;
  bool round_collected_ = false;  ///< site_.collect() was called for this round
  std::string round_error_;       ///< why it threw, if it did
  std::map<std::size_t, std::string> collect_errors_;  ///< the site's errors, by candidate
  std::vector<std::size_t> owed_barriers_;  ///< the candidates of the barriers owed, in order
  std::size_t turns_round_ = 0;  ///< tuning_.rounds_started() of the three below (0: none yet)
  std::vector<bool> agreed_prepared_;  ///< per candidate: prepared on every rank, this round
  double round_began_s_ = 0.0;         ///< site_.now_s() when the round began
  /// site_.now_s() when a candidate of the round was first seen prepared on every rank.
  std::optional<double> first_prepared_s_;
  /// When this rank's patience runs out (site_.now_s()), once enough turns began.
  std::optional<double> patient_until_s_;
};

}  // namespace disttune::detail
