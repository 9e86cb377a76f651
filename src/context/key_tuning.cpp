// KeyTuning: one kernel's rounds, driven by the RoundDriver one run per outer run.
#include "context/key_tuning.hpp"

#include <span>
#include <stdexcept>
#include <utility>

namespace disttune::detail {

namespace {

/// The plan's hook over a front end's prepare_ahead for `count` candidates: each candidate
/// the plan names (in `now` or `ahead`) is told once, and none is waited for (a launch waits
/// for its own compile), so `now` is always ready.
PrepareHook ahead_only(PrepareAhead prepare_ahead, std::size_t count) {
  return [prepare_ahead = std::move(prepare_ahead), told = std::vector<bool>(count, false)](
             std::span<const std::size_t> now, std::span<const std::size_t> ahead) mutable {
    std::vector<std::size_t> named;
    for (std::span<const std::size_t> part : {now, ahead}) {
      for (std::size_t c : part) {
        if (told.at(c)) continue;
        told[c] = true;
        named.push_back(c);
      }
    }
    if (!named.empty()) prepare_ahead(named);
    return std::vector<std::string>(now.size());
  };
}

}  // namespace

KeyTuning::KeyTuning(KernelTuningState& kernel, std::string key, std::vector<std::string> candidates,
                     const Measurement& measurement, std::string function, Communicator& comm,
                     std::chrono::milliseconds timeout, ContextLog& log, std::vector<std::size_t> prior,
                     PrepareAhead prepare_ahead, std::size_t compile_threads)
    : kernel_(&kernel),
      kernel_name_(kernel.name()),
      key_(std::move(key)),
      candidates_(std::move(candidates)),
      function_(std::move(function)),
      context_{kernel_name_, key_, timeout},
      log_(log),
      tuning_(candidates_, measurement, std::move(prior), compile_threads),
      driver_(tuning_, comm, context_, *this, *this) {
  if (prepare_ahead) plan_.emplace(ahead_only(std::move(prepare_ahead), candidates_.size()), candidates_.size());
  pending_ = driver_.next_run(Barriers::owe);
  if (!pending_) {
    throw std::logic_error("disttune: a new tuning of kernel '" + kernel.name() +
                           "' did not start with a run step");
  }
}

std::string KeyTuning::prepare(const Tuning& tuning, std::size_t candidate) {
  return plan_ ? plan_->ready(tuning, candidate) : std::string();
}

std::string KeyTuning::log_prefix() const {
  return "function: " + function_ + " | kernel: " + kernel_name_ + " | key: " + key_;
}

std::string KeyTuning::describe_candidate(std::size_t candidate) const {
  return "config-id: " + std::to_string(candidate) + " | config: " + candidates_.at(candidate);
}

void KeyTuning::settle_owed() { driver_.settle_owed_barriers(); }

void KeyTuning::commit(std::optional<double> sample) {
  const Step step = *pending_;
  std::string line = log_prefix() + " | " + describe_candidate(step.candidate) + " | " +
                     (step.kind == StepKind::timed ? "timed " : "warmup ") +
                     std::to_string(step.index + 1) + "/" + std::to_string(step.count);
  if (step.kind == StepKind::timed) {
    if (!sample) throw std::logic_error("disttune: a timed step committed without its sample");
    samples_[step.candidate].samples.push_back(*sample);
    line += " | latency: " + format_ms(*sample) + " ms";
  }
  log_.write(line);
  pending_ = driver_.next_run();
}

void KeyTuning::fail_pending(const std::string& reason) {
  const Step step = *pending_;
  driver_.fail_run(step, reason);
  log_.write(log_prefix() + " | " + describe_candidate(step.candidate) + " | failed: " + reason);
  pending_ = driver_.next_run();
}

std::optional<std::vector<double>> KeyTuning::time_batch(std::size_t, int) { return std::nullopt; }

std::map<std::size_t, CollectedRuns> KeyTuning::collect() { return std::exchange(samples_, {}); }

void KeyTuning::collected(std::size_t candidate, const std::vector<double>& samples,
                          const CandidateResult& result) {
  if (result.failed || result.samples.empty()) return;
  (void)samples;
  log_.write(log_prefix() + " | " + describe_candidate(candidate) + " | " +
             to_string(tuning_.measurement().statistic) + " latency (this rank): " +
             format_ms(summarize(result.samples, tuning_.measurement().statistic)) + " ms");
}

void KeyTuning::round_ended(const Tuning& tuning) {
  for (std::size_t c = 0; c < candidates_.size(); ++c) {
    const CandidateResult& result = tuning.results()[c];
    if (!result.measured) continue;
    log_.write(log_prefix() + " | " + describe_candidate(c) + " | " +
               (result.failed ? "failed: " + result.error
                              : "latency (max over ranks): " + format_ms(result.agreed_ms) + " ms"));
  }
}

std::optional<std::size_t> KeyTuning::named_to_prepare() const {
  return plan_ ? std::optional<std::size_t>(plan_->named_count()) : std::nullopt;
}

std::optional<KernelChoice> KeyTuning::choice() const {
  const std::optional<std::size_t> best = tuning_.best();
  if (!best) return std::nullopt;
  return KernelChoice{key_, *best, candidates_[*best], tuning_.results()};
}

}  // namespace disttune::detail
