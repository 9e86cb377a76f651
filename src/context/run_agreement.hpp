// Run agreement: at each checkpoint of an outer run the ranks agree, in one all-reduce.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "disttune/communicator.hpp"
#include "engine/rank_agreement.hpp"

namespace disttune::detail {

/// Where in an outer run the ranks meet: after a launch that is a tuning step (the
/// failure vote), or after the outer function returned or threw.
enum class Checkpoint { launch = 1, run_end = 2 };

/// What this rank reports at a checkpoint.
struct Position {
  Checkpoint checkpoint = Checkpoint::run_end;
  std::optional<std::size_t> failed_launch;  ///< ordinal of this rank's failed launch, if any
  bool outer_failed = false;   ///< run_end: the outer function threw something of its own
  std::size_t launches = 0;    ///< launches made through the tuner so far in this run
  std::string launch_digest;   ///< SHA-256 hex of what they were (kernel, key, config, kind); empty on one rank
};

/// What every rank learns.
struct Agreed {
  /// The lowest failed launch ordinal over the ranks, and the lowest rank that failed there.
  std::optional<std::size_t> failed_launch;
  int failed_rank = 0;
  std::optional<int> outer_failed_rank;  ///< a rank whose outer function threw, if any
  /// Set when the ranks are at different checkpoints or made different launches (unless an
  /// outer function threw): what differs, for a RankDisagreement on every rank.
  std::optional<std::string> disagreement;
};

/// One MAX all-reduce of 8 numbers, the same shape at every checkpoint, so ranks that
/// diverged still pair their collectives and learn it.
Agreed agree_at_checkpoint(Communicator& comm, const ContextMaker& context, const Position& mine,
                           int outer_run);

}  // namespace disttune::detail
