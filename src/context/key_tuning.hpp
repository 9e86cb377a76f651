// KeyTuning: one kernel's Tuning of one key, advanced one run step per outer run.
#pragma once

#include <chrono>
#include <map>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "context/context_log.hpp"
#include "disttune/communicator.hpp"
#include "disttune/context.hpp"
#include "disttune/tuning.hpp"
#include "engine/prepare_plan.hpp"
#include "engine/rank_agreement.hpp"
#include "engine/round_driver.hpp"

namespace disttune::detail {

/// Drives a Tuning across outer runs through the engine's RoundDriver. At any time between
/// runs it either holds the run step (warm-up or timed) its next launch does, or is
/// finished. The steps that are not runs (barriers, collects, re-takes, round ends) are
/// done only between outer runs, in commit() and fail_pending(), so every rank makes its
/// collectives at the same points whatever happened inside the runs.
class KeyTuning final : private RunSite, private RoundObserver {
 public:
  /// Takes the first run step; the barriers before it are owed until settle_owed(). `comm`
  /// and `log` must outlive this tuning.
  /// A non-empty `prior` warm-starts the tuning (Tuning's constructor).
  /// A `prepare_ahead` is told each candidate before its first launch (a PreparePlan's
  /// `now` and `ahead`, once each), and returns at once; the strategy is told the front
  /// end's `compile_threads` (SpaceInfo::compile_threads).
  KeyTuning(KernelTuningState& kernel, std::string key, std::vector<std::string> candidates,
            const Measurement& measurement, std::string function, Communicator& comm,
            std::chrono::milliseconds timeout, ContextLog& log, std::vector<std::size_t> prior = {},
            PrepareAhead prepare_ahead = {}, std::size_t compile_threads = kDefaultCompileThreads);
  KeyTuning(const KeyTuning&) = delete;
  KeyTuning& operator=(const KeyTuning&) = delete;

  /// The kernel, or nullptr once it was destroyed (orphan()).
  KernelTuningState* kernel() const { return kernel_; }
  const std::string& kernel_name() const { return kernel_name_; }
  /// The kernel is gone: nothing is remembered for it any more.
  void orphan() { kernel_ = nullptr; }
  const std::string& key() const { return key_; }
  const std::vector<std::string>& candidates() const { return candidates_; }
  /// The run step of the next launch. Only while !finished().
  const Step& pending() const { return *pending_; }
  bool finished() const { return tuning_.finished(); }
  const Tuning& tuning() const { return tuning_; }
  /// The context of this tuning's collectives (kernel, key, deadline).
  const ContextMaker& context() const { return context_; }
  /// "function: f | kernel: k | key: [..]", the start of this tuning's log lines.
  std::string log_prefix() const;
  /// "config-id: i | config: {..}".
  std::string describe_candidate(std::size_t candidate) const;

  /// Makes the barriers owed since construction (the same count on every rank).
  void settle_owed();
  /// The pending step was done in an outer run that counts; `sample` is its time if timed.
  /// Then advances to the next run step.
  void commit(std::optional<double> sample);
  /// The pending step's candidate failed (here or on another rank): records it and
  /// advances past the candidate's remaining runs.
  void fail_pending(const std::string& reason);
  /// The choice once finished, or nullopt if every candidate failed.
  std::optional<KernelChoice> choice() const;
  /// Candidates named to prepare_ahead so far (what the front end compiled), or nullopt
  /// without one.
  std::optional<std::size_t> named_to_prepare() const;

 private:
  // RunSite: runs happen inside the outer function, one per outer run; never batched.
  std::optional<std::vector<double>> time_batch(std::size_t candidate, int runs) override;
  /// Names the candidate, the rest of its round and the strategy's ahead() to prepare_ahead
  /// (through the plan), and answers ready: its launch waits for its own compile. A
  /// prepare_ahead that throws fails the candidate.
  std::string prepare(const Tuning& tuning, std::size_t candidate) override;
  std::map<std::size_t, CollectedRuns> collect() override;
  // RoundObserver: the log lines of a collect and of a round's agreed numbers.
  void collected(std::size_t candidate, const std::vector<double>& samples,
                 const CandidateResult& result) override;
  void round_ended(const Tuning& tuning) override;

  KernelTuningState* kernel_;
  std::string kernel_name_;
  std::string key_;
  std::vector<std::string> candidates_;
  std::string function_;
  ContextMaker context_;
  ContextLog& log_;
  Tuning tuning_;
  std::optional<PreparePlan> plan_;  ///< with a prepare_ahead only
  RoundDriver driver_;
  std::optional<Step> pending_;
  /// Committed timed samples of the round, by candidate, until the round's collect.
  std::map<std::size_t, CollectedRuns> samples_;
};

}  // namespace disttune::detail
