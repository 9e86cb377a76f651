// FunctionTuner: one key's protocol — rank agreement, disk lookup, measurement, record.
#include "disttune/function_tuner.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "disttune/fingerprint.hpp"
#include "disttune/store.hpp"
#include "util/env_flag.hpp"
#include "report/progress.hpp"
#include "collective/rank_agreement.hpp"
#include "engine/round_driver.hpp"
#include "store/stored_choice.hpp"
#include "report/tuning_log.hpp"
#include "util/utc_time.hpp"

namespace disttune {

struct FunctionTuner::State {
  FunctionIdentity identity;
  TunerOptions options;
  std::chrono::milliseconds timeout{};
  std::optional<DiskStore> store;
  Fingerprint fingerprint;
  std::mutex mutex;
};

namespace {

std::string sample_list(const std::vector<double>& samples) {
  std::ostringstream text;
  for (std::size_t i = 0; i < samples.size(); ++i) text << (i ? " " : "") << samples[i];
  return text.str();
}

/// The function-level side of the runs: the tuner's timer times them, one by one or as a batch.
class TimerSite final : public detail::RunSite {
 public:
  TimerSite(Timer& timer, const TuningRequest& request) : timer_(timer), request_(request) {}

  std::optional<std::vector<double>> time_batch(std::size_t candidate, int runs) override {
    return timer_.time_batch([&] { request_.run(candidate); }, runs);
  }
  std::vector<double> collect(std::size_t) override { return timer_.collect(); }

  /// Makes one run; a timed one between the timer's marks (stopped even if the run throws).
  void run(const Step& step) {
    if (step.kind != StepKind::timed) {
      request_.run(step.candidate);
      return;
    }
    timer_.prepare_timed_run();
    timer_.start();
    struct Stop {
      Timer& timer;
      ~Stop() { timer.stop(); }
    } stop{timer_};
    request_.run(step.candidate);
  }

 private:
  Timer& timer_;
  const TuningRequest& request_;
};

/// Progress on the terminal and each candidate's samples or failure in the log.
class TuningProgress final : public detail::RoundObserver {
 public:
  TuningProgress(detail::TuningLog& log, detail::Progress& progress, std::size_t count)
      : log_(log), progress_(progress), count_(count) {}

  void step(const Step& step) override {
    if (step.kind == StepKind::barrier) progress_.show(step.candidate, count_);
  }
  void collected(std::size_t candidate, const std::vector<double>& samples,
                 const CandidateResult& result) override {
    const std::string head = "candidate " + std::to_string(candidate) + " " + result.config;
    log_.write(result.failed ? head + " failed: " + result.error
                             : head + " samples_ms: " + sample_list(samples));
  }

 private:
  detail::TuningLog& log_;
  detail::Progress& progress_;
  std::size_t count_;
};

/// Drives a Tuning to its end through the round driver, the runs made here.
void drive(Tuning& tuning, const TuningRequest& request, Timer& timer, Communicator& comm,
           const detail::ContextMaker& context, detail::TuningLog& log, detail::Progress& progress) {
  TimerSite site(timer, request);
  TuningProgress observer(log, progress, tuning.results().size());
  detail::RoundDriver driver(tuning, comm, context, site, observer);
  driver.drive([&](const Step& step) { site.run(step); });
  progress.done();
}

std::string failure_summary(const FunctionIdentity& identity, const std::string& key,
                            const std::vector<CandidateResult>& results) {
  std::string text = "disttune: every config of '" + identity.name + "' failed for key " + key + ":";
  for (std::size_t i = 0; i < results.size(); ++i) {
    text += "\n  [" + std::to_string(i) + "] " + results[i].config + ": " + results[i].error;
  }
  return text;
}

}  // namespace

FunctionTuner::FunctionTuner(FunctionIdentity identity, TunerOptions options)
    : state_(std::make_unique<State>()) {
  if (identity.name.empty()) throw std::invalid_argument("disttune: a tuned function needs a name");
  if (identity.digest.empty()) {
    throw std::invalid_argument("disttune: function '" + identity.name +
                                "' needs a source digest or version");
  }
  validate(options.measurement);
  options.measurement.strategy = strategy_name(options.measurement);
  (void)make_strategy(options.measurement);  // an unknown strategy fails here, not mid-call
  if (!options.timer) options.timer = std::make_shared<CpuTimer>();
  if (!options.communicator) options.communicator = std::make_shared<SingleProcessCommunicator>();
  state_->timeout = options.collective_timeout.value_or(default_collective_timeout());
  if (options.disk_cache) {
    state_->store.emplace(options.cache_root.value_or(default_cache_root()));
    (void)state_->store->function_dir(identity.name);  // validates the name as a directory
  }
  state_->fingerprint = make_fingerprint(*options.timer);
  state_->identity = std::move(identity);
  state_->options = std::move(options);
}

FunctionTuner::~FunctionTuner() = default;

const FunctionIdentity& FunctionTuner::identity() const { return state_->identity; }
const TunerOptions& FunctionTuner::options() const { return state_->options; }

TuningReport FunctionTuner::resolve(const TuningRequest& request) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (request.candidates.empty()) {
    throw std::invalid_argument("disttune: no candidates to tune for '" + s.identity.name + "'");
  }
  Communicator& comm = request.communicator ? *request.communicator : *s.options.communicator;
  const detail::ContextMaker context{s.identity.name, request.key, s.timeout};
  const RecordId id{s.identity.name, s.identity.digest, s.fingerprint.hardware_digest(), request.key};
  if (s.store) check_record_key(request.key);  // refused now, not after tuning

  TuningReport report;
  report.function = s.identity.name;
  report.key = request.key;

  if (comm.size() > 1) {
    detail::check_ranks_agree(comm, context, s.identity, request.key, request.candidates,
                              s.options.measurement, *s.options.timer);
  }

  detail::StoredChoice choice;
  if (s.store && !detail::env_flag("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE")) {
    choice = detail::load_stored_choice(*s.store, id, request.candidates, s.fingerprint,
                                        detail::env_flag("TRITON_DIST_AUTOTUNE_VERSION_CHECK"));
  }
  std::optional<std::size_t> plan = choice.vote();
  if (comm.size() > 1) plan = detail::vote_on_stored_choice(comm, context, plan);
  const bool grown = plan && !choice.added.empty();  // every rank agreed on the same plan
  if (plan && !grown) {
    report.source = TuningReport::Source::disk;
    report.candidates = choice.record->candidates;
    report.best = *choice.best;
    report.record_path = s.store->record_path(id);
    if (request.verbose) std::cerr << format_table(report);
    return report;
  }
  // What is measured now: every candidate, or for a grown space the stored best with the
  // added ones, in one round (the stored times are never compared with fresh ones).
  std::vector<std::size_t> measured = choice.remeasured();
  if (!grown) {
    measured.resize(request.candidates.size());
    for (std::size_t i = 0; i < measured.size(); ++i) measured[i] = i;
  }
  TuningRequest part = request;
  part.candidates.clear();
  for (const std::size_t index : measured) part.candidates.push_back(request.candidates[index]);
  part.run = [&](std::size_t i) { request.run(measured[i]); };

  const std::optional<std::filesystem::path> dir =
      s.store ? s.store->usable_function_dir(s.identity.name) : std::nullopt;
  detail::TuningLog log(dir, id.file_id(), comm.rank(), comm.size(), request.verbose);
  log.write("function " + s.identity.name + " digest " + s.identity.digest);
  log.write("key " + request.key);
  log.write("rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size()));
  log.write("hardware " + canonical_json(s.fingerprint.hardware));
  log.write("deps " + canonical_json(s.fingerprint.deps));
  const Measurement& m = s.options.measurement;
  log.write("measurement warmup_runs=" + std::to_string(m.warmup_runs) +
            " timed_runs=" + std::to_string(m.timed_runs) + " statistic=" + to_string(m.statistic) +
            " strategy=" + m.strategy + " timer=" + s.options.timer->name());
  for (std::size_t i = 0; i < request.candidates.size(); ++i) {
    log.write("candidate " + std::to_string(i) + " " + request.candidates[i]);
  }
  if (grown) {
    log.write("the config space grew since the record: measuring the stored best candidate " +
              std::to_string(*choice.best) + " again with the " +
              std::to_string(choice.added.size()) + " added ones");
  }

  s.options.timer->begin_tuning();
  Tuning tuning(part.candidates, m);
  detail::Progress progress(s.identity.name);
  drive(tuning, part, *s.options.timer, comm, context, log, progress);

  const std::optional<std::size_t> part_best = tuning.best();
  if (!part_best) {
    const std::string summary = failure_summary(s.identity, request.key, tuning.results());
    log.write(summary);
    throw std::runtime_error(summary);
  }
  report.candidates = grown ? detail::merged_results(choice, request.candidates, tuning.results())
                            : tuning.results();
  const std::optional<std::size_t> best = measured[*part_best];
  report.best = *best;
  report.log_path = log.path();
  log.write("best candidate " + std::to_string(*best) + " " + report.candidates[*best].config +
            " agreed_ms " + std::to_string(report.candidates[*best].agreed_ms));

  if (s.store && comm.local_rank() == 0) {
    Record fresh;
    fresh.id = id;
    fresh.hardware = s.fingerprint.hardware;
    fresh.deps = s.fingerprint.deps;
    fresh.measurement = m;
    fresh.flush_l2 = s.options.timer->flushes_l2();
    fresh.candidates = report.candidates;
    fresh.best_index = *best;
    fresh.ranks = comm.size();
    fresh.created_utc = detail::utc_iso_now();
    fresh.library_version = library_version();
    if (grown) fresh.refreshed = RecordRefresh{fresh.created_utc, measured, *choice.best};
    report.record_path = s.store->save(fresh);
    if (report.record_path) log.write("record " + report.record_path->string());
  }
  if (request.verbose) std::cerr << format_table(report);
  return report;
}

}  // namespace disttune
