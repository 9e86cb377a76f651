// The failure vote: after each tuning launch, whether any rank's launch failed.
#pragma once

#include <cstddef>
#include <optional>

#include "context/launch_ledger.hpp"
#include "disttune/communicator.hpp"
#include "engine/rank_agreement.hpp"

namespace disttune::detail {

/// With several ranks, after a launch every rank just made: the lowest rank whose launch
/// `ordinal` failed, if any (one all-reduce). Every rank then stops the outer run at this
/// same launch, before the collectives the outer function itself would make after it. Ranks
/// at different launches: notes the disagreement in `ledger` and throws RankDisagreement.
std::optional<int> vote_on_launch_failure(Communicator& comm, const ContextMaker& context,
                                          LaunchLedger& ledger, bool failed_here,
                                          std::size_t ordinal, int outer_run);

}  // namespace disttune::detail
