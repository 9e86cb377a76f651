// ActiveRun: one contextual run per process, registered for its lifetime.
#include "context/active_run.hpp"

#include <atomic>
#include <mutex>
#include <string>

namespace disttune::detail {
namespace {

std::mutex active_mutex;
std::atomic<ContextualAutotuner*> active{nullptr};
std::string active_name;  // guarded by active_mutex

}  // namespace

ActiveRun::ActiveRun(ContextualAutotuner* tuner) {
  std::lock_guard lock(active_mutex);
  if (active.load() != nullptr) {
    throw ContextualRunActive("disttune: cannot start contextual tuning of '" + tuner->function_name() +
                              "': contextual tuning of '" + active_name +
                              "' is running in this process (contextual runs cannot be nested "
                              "or run concurrently)");
  }
  active_name = tuner->function_name();
  active.store(tuner);
}

ActiveRun::~ActiveRun() {
  std::lock_guard lock(active_mutex);
  active.store(nullptr);
  active_name.clear();
}

ContextualAutotuner* active_tuner() { return active.load(); }

}  // namespace disttune::detail
