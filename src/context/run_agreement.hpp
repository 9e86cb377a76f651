// Run agreement: after each outer run, the ranks agree whether it counts, in one all-reduce.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "disttune/communicator.hpp"
#include "rank_agreement.hpp"

namespace disttune::detail {

/// What one outer run was on this rank.
struct RunOutcome {
  std::optional<std::size_t> failed_launch;  ///< ordinal of the first launch whose candidate failed
  bool outer_failed = false;   ///< the outer function threw something that was no candidate failure
  std::size_t launches = 0;    ///< launches made through the tuner
  std::string launch_digest;   ///< SHA-256 hex of what each launch was (kernel, key, config, kind)
};

/// What every rank agrees the outer run was.
struct AgreedRun {
  /// The lowest failed launch ordinal over the ranks, and the lowest rank that failed there.
  std::optional<std::size_t> failed_launch;
  int failed_rank = 0;
  std::optional<int> outer_failed_rank;  ///< a rank whose outer function threw, if any
};

/// One MAX all-reduce of a few numbers. When no rank failed, throws RankDisagreement on every
/// rank if the ranks made different launches (count or digest), naming the outer run.
AgreedRun agree_on_run(Communicator& comm, const ContextMaker& context, const RunOutcome& mine,
                       int outer_run);

}  // namespace disttune::detail
