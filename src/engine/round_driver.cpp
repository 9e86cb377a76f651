// RoundDriver: barriers, batches, collects, re-takes and the round's reduce, written once.
#include "engine/round_driver.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <utility>

#include "util/exception_text.hpp"

namespace disttune::detail {

RoundDriver::RoundDriver(Tuning& tuning, Communicator& comm, ContextMaker context, RunSite& site,
                         RoundObserver& observer)
    : tuning_(tuning), comm_(comm), context_(std::move(context)), site_(site), observer_(observer) {}

std::optional<Step> RoundDriver::next_run(Barriers barriers) {
  while (true) {
    choose_turn();
    const std::optional<Step> step = tuning_.next();
    if (!step) return std::nullopt;
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
            tuning_.record_failure(c, exception_text(std::current_exception()));
            break;
          }
          if (batch) {
            // The batch stands for the whole timed phase.
            std::vector<double>& samples = round_samples_[c];
            samples.insert(samples.end(), batch->begin(), batch->end());
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
}

void RoundDriver::choose_turn() {
  const std::vector<std::size_t> unstarted = tuning_.unstarted();
  if (unstarted.empty() || !site_.tells_prepared()) return;
  const LeaveUnprepared leave = tuning_.current_round().leave_unprepared.value_or(LeaveUnprepared{});
  if (turns_round_ != tuning_.rounds_started()) {
    turns_round_ = tuning_.rounds_started();
    agreed_prepared_.assign(tuning_.results().size(), false);
    site_.prepare_round(tuning_);
    round_began_s_ = site_.now_s();
    first_prepared_s_.reset();
    patient_until_s_.reset();
  }
  // The runs keep the round's order: the next candidate runs once it is prepared on every
  // rank, or is left out with every other one not prepared once the patience ran out.
  // Every rank makes as many all-reduces: each decision is taken on agreed values, and each
  // wait here ends one more compile or this rank's patience.
  const std::size_t next = unstarted.front();
  while (!agreed_prepared_[next]) {
    const bool patient = !patient_until_s_ || site_.now_s() < *patient_until_s_;
    const auto [unprepared_here, anyone_patient] = agree_prepared(unstarted, patient);
    const auto prepared = static_cast<std::size_t>(
        std::count_if(unstarted.begin(), unstarted.end(), [&](std::size_t c) { return agreed_prepared_[c]; }));
    if (!first_prepared_s_ && prepared > 0) first_prepared_s_ = site_.now_s();
    if (agreed_prepared_[next]) break;
    if (!patient_until_s_) {
      if (tuning_.started() + prepared >= leave.after) {
        const double since_s = leave.from_first_prepared ? first_prepared_s_.value_or(site_.now_s()) : round_began_s_;
        const double waited_s = site_.now_s() - since_s;
        patient_until_s_ = site_.now_s() + std::max(leave.patience * waited_s, leave.patience_s);
        continue;
      }
    } else if (!anyone_patient) {
      for (std::size_t c : unstarted) {
        if (!agreed_prepared_[c]) tuning_.leave_out(c);
      }
      return;
    }
    if (!unprepared_here.empty() && patient) {
      site_.wait_prepared(tuning_, unprepared_here,
                          patient_until_s_.value_or(std::numeric_limits<double>::infinity()));
    }
  }
}

std::pair<std::vector<std::size_t>, bool> RoundDriver::agree_prepared(const std::vector<std::size_t>& unstarted,
                                                                      bool patient) {
  std::vector<std::size_t> unprepared_here;
  std::vector<double> values;  // per candidate 1: not prepared here; then 1: patient here
  values.reserve(unstarted.size() + 1);
  for (std::size_t c : unstarted) {
    const bool ready = tuning_.results()[c].failed || site_.prepared(c).has_value();
    values.push_back(ready ? 0.0 : 1.0);
    if (!ready) unprepared_here.push_back(c);
  }
  values.push_back(patient ? 1.0 : 0.0);
  if (comm_.size() > 1) comm_.all_reduce_max(values, context_("agree on prepared candidates", std::nullopt));
  for (std::size_t i = 0; i < unstarted.size(); ++i) {
    if (values[i] == 0.0) agreed_prepared_[unstarted[i]] = true;
  }
  return {unprepared_here, values.back() > 0.0};
}

bool RoundDriver::prepare(std::size_t candidate) {
  if (tuning_.results()[candidate].failed) return false;
  std::string reason;
  try {
    reason = site_.prepare(tuning_, candidate);
  } catch (...) {
    reason = exception_text(std::current_exception());
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
  if (!round_collected_) {
    // The first collect step of the round resolves every run of it: one wait.
    round_collected_ = true;
    try {
      for (auto& [candidate, runs] : site_.collect()) {
        std::vector<double>& samples = round_samples_[candidate];
        samples.insert(samples.end(), runs.samples.begin(), runs.samples.end());
        if (!runs.error.empty()) collect_errors_[candidate] = "timer: " + runs.error;
      }
    } catch (...) {
      round_error_ = "timer: " + exception_text(std::current_exception());
    }
  }
  if (!round_error_.empty()) tuning_.record_failure(c, round_error_);
  if (auto error = collect_errors_.find(c); error != collect_errors_.end()) {
    tuning_.record_failure(c, error->second);
  }
  // One listing's samples: the first `count` of the candidate's (an interleaved round
  // lists a candidate once per pass, each collected in order).
  std::vector<double>& available = round_samples_[c];
  const auto taken = static_cast<std::ptrdiff_t>(
      std::min(available.size(), static_cast<std::size_t>(step.count)));
  std::vector<double> samples(available.begin(), available.begin() + taken);
  available.erase(available.begin(), available.begin() + taken);
  if (!tuning_.results()[c].failed && samples.size() != static_cast<std::size_t>(step.count)) {
    tuning_.record_failure(c, "timer: returned " + std::to_string(samples.size()) + " times for " +
                                  std::to_string(step.count) + " timed runs");
  }
  for (double sample : samples) tuning_.record_sample(c, sample);
  observer_.collected(c, samples, tuning_.results()[c]);
}

void RoundDriver::end_round() {
  for (const auto& [candidate, extra] : round_samples_) {
    if (!extra.empty()) {
      tuning_.record_failure(candidate, "timer: returned " + std::to_string(extra.size()) +
                                            " more times than timed runs");
    }
  }
  round_samples_.clear();
  round_collected_ = false;
  round_error_.clear();
  collect_errors_.clear();
  // The round's numbers and every candidate's preparation (+inf: not prepared), one all-reduce.
  std::vector<double> values = tuning_.local_round_values();
  const std::size_t round_values = values.size();
  for (std::size_t c = 0; c < tuning_.results().size(); ++c) {
    const std::optional<double> seconds = site_.prepared(c);
    values.push_back(seconds ? *seconds : std::numeric_limits<double>::infinity());
  }
  if (comm_.size() > 1) comm_.all_reduce_max(values, context_("reduce", std::nullopt));
  tuning_.agree_preparation(std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(round_values), values.end()));
  values.resize(round_values);
  tuning_.end_round(values);
  observer_.round_ended(tuning_);
}

void RoundDriver::drive(const std::function<void(const Step&)>& run) {
  while (std::optional<Step> step = next_run()) {
    try {
      run(*step);
    } catch (...) {
      fail_run(*step, exception_text(std::current_exception()));
    }
  }
}

}  // namespace disttune::detail
