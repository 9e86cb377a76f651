// The failure vote after a tuning launch, through the run agreement's checkpoint.
#include "context/failure_vote.hpp"

#include "context/run_agreement.hpp"

namespace disttune::detail {

std::optional<int> vote_on_launch_failure(Communicator& comm, const ContextMaker& context,
                                          LaunchLedger& ledger, bool failed_here,
                                          std::size_t ordinal, int outer_run) {
  const Agreed agreed = agree_at_checkpoint(
      comm, context,
      Position{Checkpoint::launch, failed_here ? std::optional<std::size_t>(ordinal) : std::nullopt, false,
               ledger.size(), ledger.digest()},
      outer_run);
  if (agreed.disagreement) {
    ledger.disagreement = agreed.disagreement;
    throw RankDisagreement(*agreed.disagreement);
  }
  if (!agreed.failed_launch) return std::nullopt;
  return agreed.failed_rank;
}

}  // namespace disttune::detail
