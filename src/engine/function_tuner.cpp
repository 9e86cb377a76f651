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

/// Runs candidate `c` once; an exception fails the candidate instead of the tuning.
bool run_guarded(const TuningRequest& request, Tuning& tuning, std::size_t c) {
  try {
    request.run(c);
    return true;
  } catch (const std::exception& error) {
    tuning.record_failure(c, error.what());
  } catch (...) {
    tuning.record_failure(c, "unknown exception");
  }
  return false;
}

std::string sample_list(const std::vector<double>& samples) {
  std::ostringstream text;
  for (std::size_t i = 0; i < samples.size(); ++i) text << (i ? " " : "") << samples[i];
  return text.str();
}

/// Drives a Tuning to its end: runs, times, collects, reduces across ranks.
void drive(Tuning& tuning, const TuningRequest& request, Timer& timer, Communicator& comm,
           const detail::ContextMaker& context, detail::TuningLog& log, detail::Progress& progress) {
  std::vector<double> batch_samples;
  for (std::optional<Step> step = tuning.next(); step; step = tuning.next()) {
    const std::size_t c = step->candidate;
    switch (step->kind) {
      case StepKind::barrier:
        progress.show(c, tuning.results().size());
        if (comm.size() > 1) {
          comm.barrier(context(step->before_timed ? "barrier before timed runs"
                                                  : "barrier before warm-up", c));
        }
        break;
      case StepKind::warmup:
        run_guarded(request, tuning, c);
        break;
      case StepKind::timed:
        if (step->index == 0) {
          try {
            if (auto batch = timer.time_batch([&] { request.run(c); }, step->count)) {
              batch_samples = std::move(*batch);
              // The batch stands for this phase's runs: skip its remaining timed steps.
              for (int i = 1; i < step->count; ++i) tuning.next();
              break;
            }
          } catch (const std::exception& error) {
            tuning.record_failure(c, error.what());
            break;
          }
        }
        timer.prepare_timed_run();
        timer.start();
        run_guarded(request, tuning, c);
        timer.stop();
        break;
      case StepKind::collect: {
        std::vector<double> samples = std::exchange(batch_samples, {});
        try {
          for (double sample : timer.collect()) samples.push_back(sample);
        } catch (const std::exception& error) {
          tuning.record_failure(c, std::string("timer: ") + error.what());
        }
        for (double sample : samples) tuning.record_sample(c, sample);
        const CandidateResult& result = tuning.results()[c];
        if (result.failed) {
          log.write("candidate " + std::to_string(c) + " " + result.config + " failed: " + result.error);
        } else {
          log.write("candidate " + std::to_string(c) + " " + result.config +
                    " samples_ms: " + sample_list(samples));
        }
        break;
      }
      case StepKind::round_end: {
        std::vector<double> values = tuning.local_round_values();
        if (comm.size() > 1) comm.all_reduce_max(values, context("reduce", std::nullopt));
        tuning.end_round(values);
        break;
      }
    }
  }
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
