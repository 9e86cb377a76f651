// KeyTuning: one kernel's Tuning of one key, advanced one run step per outer run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "context_log.hpp"
#include "disttune/communicator.hpp"
#include "disttune/context.hpp"
#include "disttune/tuning.hpp"
#include "collective/rank_agreement.hpp"

namespace disttune::detail {

/// Drives a Tuning across outer runs. At any time between runs it either holds the run step
/// (warm-up or timed) its next launch does, or is finished. Steps that are not runs
/// (barrier, collect, round_end) are done only between outer runs, in advance(), so every
/// rank makes its collectives at the same points whatever happened inside the runs.
class KeyTuning {
 public:
  /// Pulls the first run step. The barriers before it are owed until settle_owed().
  KeyTuning(KernelTuningState& kernel, std::string key, std::vector<std::string> candidates,
            const Measurement& measurement, std::string function);

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
  /// "function: f | kernel: k | key: [..]", the start of this tuning's log lines.
  std::string log_prefix() const;
  /// "config-id: i | config: {..}".
  std::string describe_candidate(std::size_t candidate) const;

  /// Makes the barriers owed since construction (the same count on every rank).
  void settle_owed(Communicator& comm, const ContextMaker& context);
  /// The pending step was done in an outer run that counts; `sample` is its time if timed.
  /// Then advances to the next run step.
  void commit(std::optional<double> sample, Communicator& comm, const ContextMaker& context,
              ContextLog& log);
  /// The pending step's candidate failed (here or on another rank): records it and
  /// advances past the candidate's remaining runs.
  void fail_pending(const std::string& reason, Communicator& comm, const ContextMaker& context,
                    ContextLog& log);
  /// The choice once finished, or nullopt if every candidate failed.
  std::optional<KernelChoice> choice() const;

 private:
  void advance(Communicator& comm, const ContextMaker& context, ContextLog& log);
  void collect(const Step& step, ContextLog& log);

  KernelTuningState* kernel_;
  std::string kernel_name_;
  std::string key_;
  std::vector<std::string> candidates_;
  std::string function_;
  Tuning tuning_;
  std::optional<Step> pending_;
  int owed_barriers_ = 0;
  std::vector<double> samples_;  ///< committed timed samples of the current candidate
};

}  // namespace disttune::detail
