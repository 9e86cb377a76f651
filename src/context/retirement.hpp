// Retirement: finished contextual tunings leave the run and enter their kernels' caches.
#pragma once

#include <string>

#include "context/context_log.hpp"
#include "context/launch_ledger.hpp"

namespace disttune::detail {

/// Moves every finished tuning's choice into its kernel's in-process cache (unless the
/// kernel is gone) and drops the tuning from `slots`. Throws std::runtime_error, listing
/// every candidate's failure, when a finished tuning has no choice.
void retire_finished(TuningSlots& slots, ContextLog& log, const std::string& function);

}  // namespace disttune::detail
