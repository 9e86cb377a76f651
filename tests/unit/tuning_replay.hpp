// Test support: plays a Tuning to its end with given timings (Kernel Tuner's simulation idea).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "disttune/tuning.hpp"

namespace disttune::simulation {

/// The time (ms) of the `run`-th timed run of candidate `candidate`.
using Sampler = std::function<double(std::size_t candidate, int run)>;

inline std::string render(const Step& step) {
  char letter = '?';
  switch (step.kind) {
    case StepKind::barrier: letter = step.before_timed ? 'B' : 'b'; break;
    case StepKind::warmup: letter = 'w'; break;
    case StepKind::timed: letter = 't'; break;
    case StepKind::collect: letter = 'c'; break;
    case StepKind::round_end: return "end";
  }
  std::string text(1, letter);
  text += std::to_string(step.candidate);
  return text;
}

/// Plays the tunings of several simulated ranks in lockstep, rank r's samples from
/// samplers[r], reducing each round's values with MAX as a communicator would; candidates
/// in `fail_at_warmup` fail at their first warm-up on rank `failing_rank`. Each rank runs
/// its own run steps (a failed candidate's runs are skipped there); the collective steps
/// (barriers, round ends) must match on every rank, else this throws. Returns rank 0's trace.
inline std::string replay_ranks(std::vector<Tuning*> tunings, const std::vector<Sampler>& samplers,
                                const std::vector<std::size_t>& fail_at_warmup = {},
                                std::size_t failing_rank = 0) {
  const std::size_t ranks = tunings.size();
  std::vector<std::string> traces(ranks);
  std::vector<std::vector<int>> runs(ranks);
  std::vector<std::vector<double>> pending(ranks);
  // Runs rank r's steps up to and including its next collective step, which it returns.
  auto advance = [&](std::size_t r) -> std::optional<Step> {
    Tuning& tuning = *tunings[r];
    while (std::optional<Step> step = tuning.next()) {
      if (!traces[r].empty()) traces[r] += ' ';
      traces[r] += render(*step);
      const std::size_t c = step->candidate;
      runs[r].resize(tuning.results().size(), 0);
      switch (step->kind) {
        case StepKind::barrier:
        case StepKind::round_end:
          return step;
        case StepKind::warmup:
          for (std::size_t f : fail_at_warmup) {
            if (f == c && r == failing_rank) tuning.record_failure(c, "boom");
          }
          break;
        case StepKind::timed:
          pending[r].push_back(samplers[r](c, runs[r][c]++));
          break;
        case StepKind::collect:
          for (double ms : pending[r]) tuning.record_sample(c, ms);
          pending[r].clear();
          break;
      }
    }
    return std::nullopt;
  };
  while (true) {
    std::vector<std::optional<Step>> steps;
    for (std::size_t r = 0; r < ranks; ++r) steps.push_back(advance(r));
    for (std::size_t r = 1; r < ranks; ++r) {
      if (steps[r].has_value() != steps[0].has_value() ||
          (steps[0] && render(*steps[r]) != render(*steps[0]))) {
        throw std::runtime_error("ranks diverged: rank 0 did " + traces[0] + "; rank " +
                                 std::to_string(r) + " did " + traces[r]);
      }
    }
    if (!steps[0]) return traces[0];
    if (steps[0]->kind == StepKind::round_end) {
      std::vector<double> agreed = tunings[0]->local_round_values();
      for (std::size_t r = 1; r < ranks; ++r) {
        const std::vector<double> mine = tunings[r]->local_round_values();
        for (std::size_t i = 0; i < agreed.size(); ++i) agreed[i] = std::max(agreed[i], mine[i]);
      }
      for (Tuning* tuning : tunings) tuning->end_round(agreed);
    }
  }
}

/// One rank: candidate c's timed runs take times[c][run], repeating the last.
inline std::string replay(Tuning& tuning, const std::vector<std::vector<double>>& times,
                          const std::vector<std::size_t>& fail_at_warmup = {}) {
  const Sampler sampler = [&](std::size_t c, int run) {
    const auto& list = times[c];
    return list[std::min(static_cast<std::size_t>(run), list.size() - 1)];
  };
  return replay_ranks({&tuning}, {sampler}, fail_at_warmup);
}

}  // namespace disttune::simulation
