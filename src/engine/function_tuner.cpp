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

  TuningReport report;
  report.function = s.identity.name;
  report.key = request.key;

  if (comm.size() > 1) {
    detail::check_ranks_agree(comm, context, s.identity, request.key, request.candidates,
                              s.options.measurement, *s.options.timer);
  }

  std::optional<std::size_t> stored;
  std::optional<Record> record;
  if (s.store && !detail::env_flag("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE")) {
    record = detail::load_usable_record(*s.store, id, request.candidates, s.fingerprint,
                                        detail::env_flag("TRITON_DIST_AUTOTUNE_VERSION_CHECK"),
                                        stored);
  }
  if (comm.size() > 1) stored = detail::vote_on_stored_choice(comm, context, stored);
  if (stored) {
    report.source = TuningReport::Source::disk;
    report.candidates = record->candidates;
    report.best = *stored;
    report.record_path = s.store->record_path(id);
    if (request.verbose) std::cerr << format_table(report);
    return report;
  }

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

  s.options.timer->begin_tuning();
  Tuning tuning(request.candidates, m);
  detail::Progress progress(s.identity.name);
  drive(tuning, request, *s.options.timer, comm, context, log, progress);

  report.candidates = tuning.results();
  const std::optional<std::size_t> best = tuning.best();
  if (!best) {
    const std::string summary = failure_summary(s.identity, request.key, report.candidates);
    log.write(summary);
    throw std::runtime_error(summary);
  }
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
    fresh.clocks = s.options.timer->clocks();
    fresh.candidates = report.candidates;
    fresh.best_index = *best;
    fresh.ranks = comm.size();
    fresh.created_utc = detail::utc_iso_now();
    fresh.library_version = library_version();
    report.record_path = s.store->save(fresh);
    if (report.record_path) log.write("record " + report.record_path->string());
  }
  if (request.verbose) std::cerr << format_table(report);
  return report;
}

}  // namespace disttune
