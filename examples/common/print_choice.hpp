// print_choice: a tunable kernel's last tuning as text, for the contextual examples.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "disttune/context.hpp"

namespace example {

/// Prints `kernel`'s last tuning (it must have one): its name and key, then a line per
/// candidate, the chosen one starred, with its agreed time in microseconds or why it failed.
template <class Kernel>
void print_choice(const Kernel& kernel) {
  const disttune::KernelChoice tuned = *kernel.last_tuning();
  std::printf("%s, key %s:\n", kernel.spec().name.c_str(), tuned.key.c_str());
  for (std::size_t i = 0; i < tuned.candidates.size(); ++i) {
    const disttune::CandidateResult& c = tuned.candidates[i];
    const std::string outcome = c.failed ? "failed: " + c.error : std::to_string(c.agreed_ms * 1000.0) + " us";
    std::printf("  %s [%zu] %-32s %s\n", i == tuned.best ? "*" : " ", i, c.config.c_str(), outcome.c_str());
  }
}

}  // namespace example
