// Abandon and restart: every rank drops an outer run at a launch that failed on some rank.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "context/context_log.hpp"
#include "context/launch_ledger.hpp"
#include "disttune/timer.hpp"

namespace disttune::detail {

/// Every rank abandons outer run `run` at launch `ordinal`, which failed on `failed_rank`:
/// that launch's candidate fails, nothing else of the run counts, tunings created after it
/// are dropped; the outer run then starts again. `settle_new` makes a new tuning's owed
/// collectives first (the same on every rank). Finished tunings are retired
/// (retire_finished(), with `timer`). Throws RankDisagreement if this rank's launch
/// `ordinal` was no tuning launch.
void abandon_outer_run(TuningSlots& slots, const LaunchLedger& ledger, int run, std::size_t ordinal,
                       int failed_rank, const std::function<void(TuningSlot&)>& settle_new,
                       ContextLog& log, const std::string& function, const Timer& timer);

}  // namespace disttune::detail
