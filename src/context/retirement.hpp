// Retirement: finished contextual tunings leave the run and enter their kernels' caches.
#pragma once

#include <string>

#include "context/context_log.hpp"
#include "context/launch_ledger.hpp"
#include "disttune/timer.hpp"

namespace disttune::detail {

/// Moves every finished tuning's choice into its kernel's in-process cache (unless the
/// kernel is gone) and drops the tuning from `slots`. Throws TuningFailed when a finished
/// tuning has no choice: every failed candidate with its reason, and what `timer` discarded
/// (no_choice_text()).
void retire_finished(TuningSlots& slots, ContextLog& log, const std::string& function, const Timer& timer);

}  // namespace disttune::detail
