// KeyTuning: the steps of one kernel's Tuning, done between and inside outer runs.
#include "key_tuning.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace disttune::detail {

KeyTuning::KeyTuning(KernelTuningState& kernel, std::string key, std::vector<std::string> candidates,
                     const Measurement& measurement, std::string function)
    : kernel_(&kernel),
      kernel_name_(kernel.name()),
      key_(std::move(key)),
      candidates_(std::move(candidates)),
      function_(std::move(function)),
      tuning_(candidates_, measurement) {
  for (std::optional<Step> step = tuning_.next(); step; step = tuning_.next()) {
    if (step->kind == StepKind::barrier) {
      ++owed_barriers_;
    } else if (step->kind == StepKind::warmup || step->kind == StepKind::timed) {
      pending_ = *step;
      return;
    } else {
      break;
    }
  }
  throw std::logic_error("disttune: a new tuning of kernel '" + kernel.name() +
                         "' did not start with a run step");
}

std::string KeyTuning::log_prefix() const {
  return "function: " + function_ + " | kernel: " + kernel_name_ + " | key: " + key_;
}

std::string KeyTuning::describe_candidate(std::size_t candidate) const {
  return "config-id: " + std::to_string(candidate) + " | config: " + candidates_.at(candidate);
}

void KeyTuning::settle_owed(Communicator& comm, const ContextMaker& context) {
  for (; owed_barriers_ > 0; --owed_barriers_) {
    if (comm.size() > 1) comm.barrier(context("barrier before warm-up", 0));
  }
}

void KeyTuning::commit(std::optional<double> sample, Communicator& comm,
                       const ContextMaker& context, ContextLog& log) {
  const Step step = *pending_;
  std::string line = log_prefix() + " | " + describe_candidate(step.candidate) + " | " +
                     (step.kind == StepKind::timed ? "timed " : "warmup ") +
                     std::to_string(step.index + 1) + "/" + std::to_string(step.count);
  if (step.kind == StepKind::timed) {
    if (!sample) throw std::logic_error("disttune: a timed step committed without its sample");
    samples_.push_back(*sample);
    line += " | latency: " + format_ms(*sample) + " ms";
  }
  log.write(line);
  pending_.reset();
  advance(comm, context, log);
}

void KeyTuning::fail_pending(const std::string& reason, Communicator& comm,
                             const ContextMaker& context, ContextLog& log) {
  const std::size_t candidate = pending_->candidate;
  tuning_.record_failure(candidate, reason);
  log.write(log_prefix() + " | " + describe_candidate(candidate) + " | failed: " + reason);
  pending_.reset();
  advance(comm, context, log);
}

void KeyTuning::advance(Communicator& comm, const ContextMaker& context, ContextLog& log) {
  for (std::optional<Step> step = tuning_.next(); step; step = tuning_.next()) {
    switch (step->kind) {
      case StepKind::warmup:
      case StepKind::timed:
        pending_ = *step;
        return;
      case StepKind::barrier:
        if (comm.size() > 1) {
          comm.barrier(context(step->before_timed ? "barrier before timed runs" : "barrier before warm-up",
                               step->candidate));
        }
        break;
      case StepKind::collect:
        collect(*step, log);
        break;
      case StepKind::round_end: {
        std::vector<double> values = tuning_.local_round_values();
        if (comm.size() > 1) comm.all_reduce_max(values, context("reduce", std::nullopt));
        tuning_.end_round(values);
        for (std::size_t c = 0; c < candidates_.size(); ++c) {
          const CandidateResult& result = tuning_.results()[c];
          if (!result.measured) continue;
          log.write(log_prefix() + " | " + describe_candidate(c) + " | " +
                    (result.failed ? "failed: " + result.error
                                   : "latency (max over ranks): " + format_ms(result.agreed_ms) + " ms"));
        }
        break;
      }
    }
  }
}

void KeyTuning::collect(const Step& step, ContextLog& log) {
  const std::size_t c = step.candidate;
  const std::vector<double> samples = std::exchange(samples_, {});
  for (double sample : samples) {
    // A re-take would give this rank more timed runs than the others, and runs are
    // counted in outer runs that every rank makes together: a bad time fails instead.
    if (std::isfinite(sample) && sample >= 0.0) {
      tuning_.record_sample(c, sample);
    } else {
      tuning_.record_failure(c, "timer returned an invalid time (" + format_ms(sample) + " ms)");
    }
  }
  const CandidateResult& result = tuning_.results()[c];
  if (!result.failed && samples.size() != static_cast<std::size_t>(step.count)) {
    throw std::logic_error("disttune: kernel '" + kernel_name_ + "' collected " +
                           std::to_string(samples.size()) + " samples for " +
                           std::to_string(step.count) + " timed runs");
  }
  if (!result.failed) {
    log.write(log_prefix() + " | " + describe_candidate(c) + " | " + to_string(tuning_.measurement().statistic) +
              " latency (this rank): " + format_ms(summarize(result.samples, tuning_.measurement().statistic)) +
              " ms");
  }
}

std::optional<KernelChoice> KeyTuning::choice() const {
  const std::optional<std::size_t> best = tuning_.best();
  if (!best) return std::nullopt;
  return KernelChoice{key_, *best, candidates_[*best], tuning_.results()};
}

}  // namespace disttune::detail
