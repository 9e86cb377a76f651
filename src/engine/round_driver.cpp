// RoundDriver: barriers, batches, collects, re-takes and the round's reduce, written once.
#include "engine/round_driver.hpp"

#include <exception>
#include <utility>

namespace disttune::detail {
namespace {

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

RoundDriver::RoundDriver(Tuning& tuning, Communicator& comm, ContextMaker context, RunSite& site,
                         RoundObserver& observer)
    : tuning_(tuning), comm_(comm), context_(std::move(context)), site_(site), observer_(observer) {}

std::optional<Step> RoundDriver::next_run(Barriers barriers) {
  for (std::optional<Step> step = tuning_.next(); step; step = tuning_.next()) {
    observer_.step(*step);
    const std::size_t c = step->candidate;
    switch (step->kind) {
      case StepKind::barrier:
        (void)prepare(c);  // a candidate that cannot run still makes its barriers
        barrier(*step, barriers);
        break;
      case StepKind::warmup:
        if (!prepare(c)) break;  // failed: the tuning skips its runs
        return step;
      case StepKind::timed:
        if (step->index == 0) {
          std::optional<std::vector<double>> batch;
          try {
            batch = site_.time_batch(c, step->count);
          } catch (...) {
            tuning_.record_failure(c, describe_current_exception());
            break;
          }
          if (batch) {
            // The batch stands for the whole timed phase.
            batch_samples_ = std::move(*batch);
            tuning_.batch_timed_phase();
            break;
          }
        }
        return step;
      case StepKind::collect:
        collect(*step);
        break;
      case StepKind::round_end:
        end_round();
        break;
    }
  }
  return std::nullopt;
}

bool RoundDriver::prepare(std::size_t candidate) {
  if (tuning_.results()[candidate].failed) return false;
  std::string reason;
  try {
    reason = site_.prepare(tuning_, candidate);
  } catch (...) {
    reason = describe_current_exception();
  }
  if (reason.empty()) return true;
  tuning_.record_failure(candidate, std::move(reason));
  return false;
}

void RoundDriver::barrier(const Step& step, Barriers barriers) {
  if (barriers == Barriers::owe) {
    owed_barriers_.push_back(step.candidate);
    return;
  }
  if (comm_.size() > 1) comm_.barrier(context_("barrier before timed runs", step.candidate));
}

void RoundDriver::settle_owed_barriers() {
  for (std::size_t candidate : std::exchange(owed_barriers_, {})) {
    if (comm_.size() > 1) comm_.barrier(context_("barrier before timed runs", candidate));
  }
}

void RoundDriver::fail_run(const Step& run, std::string reason) {
  tuning_.record_failure(run.candidate, std::move(reason));
}

void RoundDriver::collect(const Step& step) {
  const std::size_t c = step.candidate;
  std::vector<double> samples = std::exchange(batch_samples_, {});
  try {
    for (double sample : site_.collect(c)) samples.push_back(sample);
  } catch (...) {
    tuning_.record_failure(c, "timer: " + describe_current_exception());
  }
  if (!tuning_.results()[c].failed && samples.size() != static_cast<std::size_t>(step.count)) {
    tuning_.record_failure(c, "timer: returned " + std::to_string(samples.size()) + " times for " +
                                  std::to_string(step.count) + " timed runs");
  }
  for (double sample : samples) tuning_.record_sample(c, sample);
  observer_.collected(c, samples, tuning_.results()[c]);
}

void RoundDriver::end_round() {
  std::vector<double> values = tuning_.local_round_values();
  if (comm_.size() > 1) comm_.all_reduce_max(values, context_("reduce", std::nullopt));
  tuning_.end_round(values);
  observer_.round_ended(tuning_);
}

void RoundDriver::drive(const std::function<void(const Step&)>& run) {
  while (std::optional<Step> step = next_run()) {
    try {
      run(*step);
    } catch (...) {
      fail_run(*step, describe_current_exception());
    }
  }
}

}  // namespace disttune::detail
