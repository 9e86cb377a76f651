// Retirement of finished contextual tunings into their kernels' caches.
#include "context/retirement.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "disttune/error.hpp"
#include "engine/no_choice.hpp"

namespace disttune::detail {

void retire_finished(TuningSlots& slots, ContextLog& log, const std::string& function, const Timer& timer) {
  for (auto it = slots.begin(); it != slots.end();) {
    KeyTuning& tuning = *(*it)->tuning;
    if (!tuning.finished()) {
      ++it;
      continue;
    }
    std::optional<KernelChoice> choice = tuning.choice();
    if (!choice) {
      const std::string text = no_choice_text("kernel '" + tuning.kernel_name() + "'", tuning.key(),
                                              " in contextual tuning of '" + function + "'",
                                              tuning.tuning().results(), timer.clocks(), log.path());
      log.write(text);
      throw TuningFailed(text);
    }
    std::string line = tuning.log_prefix() + " | best-config-id: " + std::to_string(choice->best) +
                       " | best-config: " + choice->config +
                       " | best-latency: " + format_ms(choice->candidates[choice->best].agreed_ms) + " ms";
    if (const std::optional<std::size_t> named = tuning.named_to_prepare()) {
      // What the front end compiled against what was measured: a search's speculation.
      const auto measured = std::count_if(choice->candidates.begin(), choice->candidates.end(),
                                          [](const CandidateResult& c) { return c.measured; });
      line += " | compiled: " + std::to_string(*named) + " of " + std::to_string(choice->candidates.size()) +
              " | measured: " + std::to_string(measured);
    }
    log.write(line);
    if (KernelTuningState* kernel = tuning.kernel()) kernel->remember(std::move(*choice));
    it = slots.erase(it);
  }
}

}  // namespace disttune::detail
