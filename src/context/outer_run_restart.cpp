// Abandoning an outer run at a failed launch, the same way on every rank.
#include "context/outer_run_restart.hpp"

#include <algorithm>

#include "context/retirement.hpp"
#include "disttune/communicator.hpp"

namespace disttune::detail {

void abandon_outer_run(TuningSlots& slots, const LaunchLedger& ledger, int run, std::size_t ordinal,
                       int failed_rank, const std::function<void(TuningSlot&)>& settle_new,
                       ContextLog& log, const std::string& function, const Timer& timer) {
  const std::vector<LaunchRecord>& launches = ledger.launches();
  if (ordinal >= launches.size() || launches[ordinal].slot == nullptr) {
    throw RankDisagreement("disttune: rank " + std::to_string(failed_rank) + " failed a candidate at launch " +
                           std::to_string(ordinal) + " of outer run " + std::to_string(run) + " of '" +
                           function + "', but this rank's launch " + std::to_string(ordinal) +
                           (ordinal >= launches.size() ? " did not happen" : " was no tuning launch") +
                           "; every rank must run the same kernels in the same order");
  }
  TuningSlot* failed = launches[ordinal].slot;
  const std::string reason = ledger.failed_launch() == ordinal
                                 ? ledger.failure_reason()
                                 : "failed on rank " + std::to_string(failed_rank);
  log.write("function: " + function + " | outer-run: " + std::to_string(run) + " abandoned at launch " +
            std::to_string(ordinal) + ": kernel " + failed->tuning->kernel_name() + " | key: " +
            failed->tuning->key() + " | " + failed->tuning->describe_candidate(launches[ordinal].candidate) +
            " | failed on rank " + std::to_string(failed_rank) + ": " + reason + " | restarting the outer run");
  std::erase_if(slots, [&](const std::unique_ptr<TuningSlot>& slot) {
    return slot->created_run == run && slot->created_at > ordinal;
  });
  for (auto& slot : slots) {
    settle_new(*slot);
    if (slot.get() == failed) slot->tuning->fail_pending(reason);
  }
  retire_finished(slots, log, function, timer);
}

}  // namespace disttune::detail
