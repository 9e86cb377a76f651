// ActiveRun: the process-wide registry of the one contextual run that may be active.
#pragma once

#include "disttune/context.hpp"

namespace disttune::detail {

/// Registers a tuner's run as this process's active one for its lifetime; a second one,
/// nested or concurrent, is refused with ContextualRunActive and changes nothing.
class ActiveRun {
 public:
  explicit ActiveRun(ContextualAutotuner* tuner);
  ~ActiveRun();
  ActiveRun(const ActiveRun&) = delete;
  ActiveRun& operator=(const ActiveRun&) = delete;
};

/// The tuner whose run is active in this process, or nullptr.
ContextualAutotuner* active_tuner();

}  // namespace disttune::detail
