// FunctionTuner: one key's protocol — rank agreement, disk lookup, measurement, record.
#include "disttune/function_tuner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>
#include <stdexcept>
#include <thread>

#include "disttune/fingerprint.hpp"
#include "disttune/settings.hpp"
#include "disttune/store.hpp"
#include "disttune/store_chain.hpp"
#include "report/emit.hpp"
#include "report/progress.hpp"
#include "engine/no_choice.hpp"
#include "engine/prepare_plan.hpp"
#include "engine/rank_agreement.hpp"
#include "engine/rank_split.hpp"
#include "engine/round_driver.hpp"
#include "engine/warm_start_prior.hpp"
#include "record/record_builder.hpp"
#include "store/store_chain.hpp"
#include "report/tuning_log.hpp"
#include "report/unknown_settings.hpp"
#include "util/exception_text.hpp"

namespace disttune {

struct FunctionTuner::State {
  FunctionIdentity identity;
  TunerOptions options;
  std::chrono::milliseconds timeout{};
  detail::StoreChain stores;
  Fingerprint fingerprint;
  std::mutex mutex;

  /// The stored record of the chain of stores, read against the request's candidates (a hit
  /// or a grown space), before the ranks vote on it; nullopt on a miss. Makes no collective
  /// call.
  std::optional<detail::StoreChain::Found> stored_choice(const TuningRequest& request, const Communicator& comm,
                                                         const RecordId& id) const;
  /// The report of a stored choice every rank agreed on.
  TuningReport stored_report(const TuningRequest& request,
                             const detail::StoreChain::Found& found) const;
  /// Where a tuning's log goes: the function's directory, when the store has a usable one.
  std::optional<std::filesystem::path> log_dir();
  /// Starts a tuning's log with its identity, settings and candidates.
  void log_header(detail::TuningLog& log, const TuningRequest& request, const Communicator& comm);
  /// This rank's warm-start prior for a miss (none when warm start is off, the stores are
  /// absent or ignored); makes no collective call.
  WarmStart warm_start_prior(const TuningRequest& request, const RecordId& id) const;
  /// Measures the candidates (every rank all of them, or each its share when `split`) and
  /// returns the report of the choice; throws, listing every failure, if all failed. A
  /// `prior` warm-starts the tuning (not with `split`).
  TuningReport measure(const TuningRequest& request, Communicator& comm, const detail::ContextMaker& context,
                       detail::TuningLog& log, bool split, std::vector<std::size_t> prior = {});
};

namespace {

/// How often a round that waits for one more compile asks the request's `prepared`: each
/// answer from Python takes the GIL, and a compile takes a second or more.
constexpr std::chrono::milliseconds kPreparedPoll{10};

std::string sample_list(const std::vector<double>& samples) {
  std::ostringstream text;
  for (std::size_t i = 0; i < samples.size(); ++i) text << (i ? " " : "") << samples[i];
  return text.str();
}

/// The function-level side of the runs: the request's prepare readies them ahead, the
/// tuner's timer times them, one by one or as a batch.
class TimerSite final : public detail::RunSite {
 public:
  TimerSite(Timer& timer, const TuningRequest& request) : timer_(timer), request_(request) {
    if (request.prepare) plan_.emplace(request.prepare, request.candidates.size());
  }

  std::string prepare(const Tuning& tuning, std::size_t candidate) override {
    return plan_ ? plan_->ready(tuning, candidate) : std::string();
  }
  /// The request's answer, asked only of candidates named to the prepare hook and not yet
  /// seen compiled (a compile that ended stays ended): a round's end costs one call per
  /// compile in flight, not one per candidate (a Python answer takes the GIL each time).
  std::optional<double> prepared(std::size_t candidate) override {
    if (!request_.prepared) return RunSite::prepared(candidate);
    if (compiled_s_.size() <= candidate) compiled_s_.resize(request_.candidates.size());
    if (compiled_s_.at(candidate)) return compiled_s_[candidate];
    if (plan_ && !plan_->named(candidate)) return std::nullopt;
    compiled_s_[candidate] = request_.prepared(candidate);
    // One its prepare answered (e.g. a compile that timed out) waits for nothing more.
    if (!compiled_s_[candidate] && plan_ && plan_->settled(candidate)) return 0.0;
    return compiled_s_[candidate];
  }
  bool tells_prepared() const override { return plan_ && request_.prepared; }
  void prepare_round(const Tuning& tuning) override {
    if (plan_) plan_->start_round(tuning);
  }
  /// Asks the request every kPreparedPoll until one of them is prepared or the time is up;
  /// one never named to the prepare hook is prepared through it at once (nothing else would
  /// ever end it).
  void wait_prepared(const Tuning& tuning, const std::vector<std::size_t>& candidates, double until_s) override {
    for (std::size_t c : candidates) {
      if (plan_ && !plan_->named(c)) {
        (void)plan_->ready(tuning, c);
        return;
      }
    }
    while (now_s() < until_s &&
           std::none_of(candidates.begin(), candidates.end(), [&](std::size_t c) { return prepared(c).has_value(); }))
      std::this_thread::sleep_for(kPreparedPoll);
  }
  /// Candidates named to the request's prepare hook; nullopt without one.
  std::optional<std::size_t> prepared() const {
    return plan_ ? std::optional<std::size_t>(plan_->named_count()) : std::nullopt;
  }

  std::optional<std::vector<double>> time_batch(std::size_t candidate, int runs) override {
    return timer_.time_batch([&] { request_.run(candidate); }, runs);
  }
  /// The runs timed since the last collect, by candidate: one wait for a round's pairs (a
  /// timer that cannot hold pairs across candidates was settled at each change of candidate).
  std::map<std::size_t, detail::CollectedRuns> collect() override {
    settle(false);
    return std::exchange(collected_, {});
  }

  /// Makes one run; a timed one between the timer's marks (stopped even if the run throws).
  void run(const Step& step) {
    const bool new_candidate = !marked_.empty() && marked_.back() != step.candidate;
    if (new_candidate && !timer_.holds_pairs_across_candidates()) settle(false);
    if (step.kind != StepKind::timed) {
      request_.run(step.candidate);
      return;
    }
    timer_.prepare_timed_run();
    timer_.start();
    marked_.push_back(step.candidate);
    try {
      struct Stop {
        Timer& timer;
        ~Stop() { timer.stop(); }
      } stop{timer_};
      request_.run(step.candidate);
    } catch (...) {
      settle(true);  // the pairs so far are filed before the candidate fails
      throw;
    }
  }

 private:
  /// Resolves the marked pairs now and files their times by candidate. When the last run
  /// failed it may have left no time (a worker that died): the others are filed without it.
  void settle(bool last_run_failed) {
    const std::vector<std::size_t> marked = std::exchange(marked_, {});
    if (marked.empty()) return;
    std::vector<double> times;
    std::string error;
    try {
      times = timer_.collect();
    } catch (...) {
      error = detail::exception_text(std::current_exception());
    }
    const bool failed_run_left_none = last_run_failed && times.size() + 1 == marked.size();
    const std::size_t filed = failed_run_left_none ? times.size() : marked.size();
    if (error.empty() && times.size() != filed) {
      error = "returned " + std::to_string(times.size()) + " times for " +
              std::to_string(marked.size()) + " timed runs";
    }
    for (std::size_t i = 0; i < marked.size(); ++i) {
      detail::CollectedRuns& runs = collected_[marked[i]];
      if (!error.empty()) {
        runs.error = error;
      } else if (i < filed) {
        runs.samples.push_back(times[i]);
      }
    }
  }

  Timer& timer_;
  const TuningRequest& request_;
  std::vector<std::size_t> marked_;  ///< the candidate of each pair marked since the last settle
  std::map<std::size_t, detail::CollectedRuns> collected_;  ///< settled, until the collect
  std::optional<detail::PreparePlan> plan_;
  std::vector<std::optional<double>> compiled_s_;  ///< per candidate: its compile seconds, once seen
};

/// The request over some of its candidates (`indices` into them): candidate i of the result
/// is candidate indices[i] of `request`, for its runs and its prepare calls.
TuningRequest part_of(const TuningRequest& request, const std::vector<std::size_t>& indices) {
  TuningRequest part = request;
  part.candidates.clear();
  for (std::size_t index : indices) part.candidates.push_back(request.candidates.at(index));
  part.run = [&request, &indices](std::size_t i) { request.run(indices.at(i)); };
  if (request.prepare) {
    part.prepare = [&request, &indices](std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
      std::vector<std::size_t> whole_now;
      std::vector<std::size_t> whole_ahead;
      for (std::size_t i : now) whole_now.push_back(indices.at(i));
      for (std::size_t i : ahead) whole_ahead.push_back(indices.at(i));
      return request.prepare(whole_now, whole_ahead);
    };
  }
  if (request.prepared) {
    part.prepared = [&request, &indices](std::size_t i) { return request.prepared(indices.at(i)); };
  }
  return part;
}

/// Progress (round, candidate, time) and each candidate's samples or failure in the log.
class TuningProgress final : public detail::RoundObserver {
 public:
  TuningProgress(detail::TuningLog& log, detail::Progress& progress) : log_(log), progress_(progress) {}

  void step(const Step& step) override {
    if (step.kind == StepKind::barrier) progress_.show(step.candidate);
    if (step.kind == StepKind::round_end) progress_.round_ended();
  }
  void collected(std::size_t candidate, const std::vector<double>& samples,
                 const CandidateResult& result) override {
    const std::string head = "candidate " + std::to_string(candidate) + " " + result.config;
    log_.write(result.failed ? head + " failed: " + result.error
                             : head + " samples_ms: " + sample_list(samples));
    if (result.failed) failure_logged_.insert(candidate);
  }
  /// Logs in full each failure no collect reported (a candidate that failed before its timed
  /// runs), so that the log holds every failure of the tuning.
  void log_other_failures(const std::vector<CandidateResult>& results) {
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (!results[i].failed || failure_logged_.contains(i)) continue;
      log_.write("candidate " + std::to_string(i) + " " + results[i].config + " failed: " + results[i].error);
    }
  }

 private:
  detail::TuningLog& log_;
  detail::Progress& progress_;
  std::set<std::size_t> failure_logged_;
};

/// Drives a Tuning to its end through the round driver, the runs made here; returns the
/// candidates named to the request's prepare hook (nullopt without one).
std::optional<std::size_t> drive(Tuning& tuning, const TuningRequest& request, Timer& timer, Communicator& comm,
                                 const detail::ContextMaker& context, detail::TuningLog& log,
                                 detail::Progress& progress) {
  TimerSite site(timer, request);
  TuningProgress observer(log, progress);
  detail::RoundDriver driver(tuning, comm, context, site, observer);
  driver.drive([&](const Step& step) { site.run(step); });
  observer.log_other_failures(tuning.results());
  progress.done();
  return site.prepared();
}

/// Every setting checked whatever the others (docs/settings.md): the environment's values,
/// and the two that only their users read: the stores' URLs without a store, the strategy
/// variable of a tuner that names its own strategy.
void check_settings() {
  check_environment();
  check_store_environment();
  (void)strategy_name(Measurement{});  // the variable's strategy, refused if not registered
}

/// Which stores of the chain this rank writes: local rank 0 its node's, rank 0 the job's.
detail::StoreWriter store_writer(const Communicator& comm) {
  return detail::StoreWriter{.node = comm.local_rank() == 0, .job = comm.rank() == 0};
}

std::string index_list(const std::vector<std::size_t>& indices) {
  std::string text;
  for (std::size_t i : indices) {
    if (!text.empty()) text += ' ';
    text += std::to_string(i);
  }
  return text.empty() ? "(none)" : text;
}

}  // namespace

std::optional<detail::StoreChain::Found> FunctionTuner::State::stored_choice(
    const TuningRequest& request, const Communicator& comm, const RecordId& id) const {
  // Each rank looks in its stores (no collective there), then every rank votes: a record
  // found by some ranks only (e.g. where a shared store answered) makes all of them tune.
  if (!stores.any() || always_tune_setting()) return std::nullopt;
  return stores.find(id, request.candidates, fingerprint, version_check_setting(), store_writer(comm));
}

WarmStart FunctionTuner::State::warm_start_prior(const TuningRequest& request, const RecordId& id) const {
  if (!stores.any() || always_tune_setting() || !warm_start_setting()) return {};
  return detail::neighbour_prior(stores.records_of(id, kWarmStartMostRecords), request.key, request.candidates, options.key_distance);
}

TuningReport FunctionTuner::State::stored_report(const TuningRequest& request,
                                                 const detail::StoreChain::Found& found) const {
  TuningReport report = report_of_record(*found.choice.record, found.source);
  report.function = identity.name;
  report.key = request.key;
  report.best = *found.choice.best;
  report.record_path = found.record_path;
  report.pruned = request.pruned;  // this call's, which the record's may predate
  return report;
}

std::optional<std::filesystem::path> FunctionTuner::State::log_dir() {
  return stores.log_dir(identity.name);
}

void FunctionTuner::State::log_header(detail::TuningLog& log, const TuningRequest& request,
                                      const Communicator& comm) {
  log.write("function " + identity.name + " digest " + identity.digest);
  log.write("key " + request.key);
  log.write("rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size()));
  log.write("hardware " + canonical_json(fingerprint.hardware));
  log.write("deps " + canonical_json(fingerprint.deps));
  const Measurement& m = options.measurement;
  std::string settings = "measurement warmup_runs=" + std::to_string(m.warmup_runs) +
                         " timed_runs=" + std::to_string(m.timed_runs) + " statistic=" + to_string(m.statistic) +
                         " strategy=" + m.strategy + " timer=" + options.timer->name();
  if (options.split_across_ranks && comm.size() > 1) {
    settings += " split_across_ranks=";
    settings += std::to_string(comm.size());
  }
  log.write(settings);
  for (std::size_t i = 0; i < request.candidates.size(); ++i) {
    log.write("candidate " + std::to_string(i) + " " + request.candidates[i]);
  }
}

TuningReport FunctionTuner::State::measure(const TuningRequest& request, Communicator& comm,
                                           const detail::ContextMaker& context, detail::TuningLog& log,
                                           bool split, std::vector<std::size_t> prior) {
  TuningReport report;
  report.function = identity.name;
  report.key = request.key;
  report.timer = options.timer->name();
  report.pruned = request.pruned;
  options.timer->begin_tuning();
  detail::Progress progress(identity.name, request.candidates.size(), request.verbose);
  std::optional<std::size_t> best;
  if (split) {
    const std::vector<std::size_t> share = split_share(request.candidates.size(), comm.rank(), comm.size());
    log.write("split: this rank measures candidates " + index_list(share));
    report.candidates = detail::measure_split(
        request.candidates, comm, context, [&](const std::vector<std::string>& texts) {
          const TuningRequest local = part_of(request, share);
          Tuning tuning(texts, options.measurement, {}, request.compile_threads);
          SingleProcessCommunicator alone;
          (void)drive(tuning, local, *options.timer, alone, context, log, progress);
          return tuning.results();
        });
    report.split_ranks = comm.size();
    best = detail::best_of(report.candidates);
  } else {
    Tuning tuning(request.candidates, options.measurement, std::move(prior), request.compile_threads);
    report.prepared = drive(tuning, request, *options.timer, comm, context, log, progress);
    report.candidates = tuning.results();
    best = tuning.best();
  }
  if (!best) {
    const std::string summary =
        detail::no_choice_text("'" + identity.name + "'", request.key, "", report.candidates, options.timer->clocks(),
                               log.path());
    log.write(summary);
    throw TuningFailed(summary);
  }
  report.best = *best;
  report.log_path = log.path();
  log.write("best candidate " + std::to_string(*best) + " " + report.candidates[*best].config +
            " agreed_ms " + std::to_string(report.candidates[*best].agreed_ms));
  return report;
}

FunctionTuner::FunctionTuner(FunctionIdentity identity, TunerOptions options)
    : state_(std::make_unique<State>()) {
  if (identity.name.empty()) throw std::invalid_argument("disttune: a tuned function needs a name");
  if (identity.digest.empty()) {
    throw std::invalid_argument("disttune: function '" + identity.name +
                                "' needs a source digest or version");
  }
  check_settings();
  detail::warn_unknown_settings();
  validate(options.measurement);
  options.measurement.strategy = strategy_name(options.measurement);
  (void)make_strategy(options.measurement);  // an unknown strategy fails here, not mid-call
  if (!options.timer) options.timer = std::make_shared<CpuTimer>();
  if (!options.communicator) options.communicator = std::make_shared<SingleProcessCommunicator>();
  if (options.collective_timeout) validate_timeout(*options.collective_timeout, "collective_timeout");
  state_->timeout = options.collective_timeout.value_or(default_collective_timeout());
  if (options.disk_cache) {
    state_->stores = detail::StoreChain::from_urls(
        store_chain_urls(options.stores, options.cache_root, options.shared_store));
    state_->stores.check_function_name(identity.name);
  } else if (options.stores) {
    (void)detail::StoreChain::from_urls(*options.stores);  // refused now, though none is used
  }
  state_->fingerprint = make_fingerprint(*options.timer);
  state_->identity = std::move(identity);
  state_->options = std::move(options);
}

FunctionTuner::~FunctionTuner() = default;

std::vector<Record> FunctionTuner::stored_records(std::size_t most) const {
  const State& s = *state_;
  if (!s.stores.any()) return {};
  return s.stores.records_of(RecordId{s.identity.name, s.identity.digest, s.fingerprint.hardware_digest(), ""},
                             most);
}

std::optional<std::filesystem::path> FunctionTuner::directory_root() const { return state_->stores.directory_root(); }

const FunctionIdentity& FunctionTuner::identity() const { return state_->identity; }
const TunerOptions& FunctionTuner::options() const { return state_->options; }

TuningReport FunctionTuner::resolve(const TuningRequest& request) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (request.candidates.empty()) {
    throw TuningFailed("disttune: no candidates to tune for '" + s.identity.name + "'");
  }
  check_settings();  // every setting, whether or not this tuning reads it
  Communicator& comm = request.communicator ? *request.communicator : *s.options.communicator;
  const detail::ContextMaker context{s.identity.name, request.key, s.timeout};
  const RecordId id{s.identity.name, s.identity.digest, s.fingerprint.hardware_digest(), request.key};
  if (s.stores.any()) check_record_key(request.key);  // refused now, not after tuning

  if (comm.size() > 1) {
    detail::check_ranks_agree(comm, context, s.identity, request.key, request.candidates,
                              s.options.measurement, *s.options.timer, s.options.split_across_ranks);
  }
  const std::optional<detail::StoreChain::Found> found = s.stored_choice(request, comm, id);
  std::optional<std::size_t> plan = found ? found->choice.vote() : std::nullopt;
  if (comm.size() > 1) plan = detail::vote_on_stored_choice(comm, context, plan);
  // Every rank agreed on the same plan, so a plan means every rank found a record.
  const bool grown = plan && !found->choice.added.empty();
  if (plan && !grown) {
    TuningReport stored = s.stored_report(request, *found);
    if (request.verbose) detail::emit(MessageKind::table, format_table(stored));
    return stored;
  }
  detail::TuningLog log(s.log_dir(), id.file_id(), comm.rank(), comm.size(), request.verbose);
  s.log_header(log, request, comm);
  const bool split = s.options.split_across_ranks && comm.size() > 1;
  TuningReport report;
  std::optional<RecordRefresh> refreshed;
  std::optional<WarmStart> warm_start;
  if (grown) {
    const detail::StoredChoice& choice = found->choice;
    // The stored best is measured again with the added candidates, in one round: a stored
    // time is never compared with a fresh one.
    const std::vector<std::size_t> measured = choice.remeasured();
    log.write("the config space grew since the record: measuring the stored best candidate " +
              std::to_string(*choice.best) + " again with the " + std::to_string(choice.added.size()) +
              " added ones");
    report = s.measure(part_of(request, measured), comm, context, log, split);
    report.candidates = detail::merged_results(choice, request.candidates, report.candidates);
    report.best = measured[report.best];
    log.write("kept candidate " + std::to_string(report.best) + " of the grown space");
    refreshed = RecordRefresh{"", measured, *choice.best};  // stamped with the record
  } else {
    // Warm start: every rank proposes the prior its stores give, and the ranks use it only
    // if all proposed the same (a split tuning measures shares, never a prior).
    WarmStart warm = split ? WarmStart{} : s.warm_start_prior(request, id);
    if (comm.size() > 1 && !split) warm = detail::agree_on_prior(comm, context, std::move(warm));
    if (!warm.prior.empty()) {
      std::string keys;
      for (const std::string& key : warm.from_keys) keys += " " + key;
      log.write("warm start from the records of keys" + keys + "; prior " + index_list(warm.prior));
      warm_start = warm;
    }
    report = s.measure(request, comm, context, log, split, warm.prior);
    report.warm_start_from = warm.from_keys;
  }
  // Local rank 0 of each node writes its node's stores, rank 0 of the job the shared ones; a
  // cancelled tuning (e.g. Ctrl-C) is no result and is stored nowhere.
  const bool cancelled = request.cancelled && request.cancelled();
  if (s.stores.any() && !cancelled && (comm.local_rank() == 0 || comm.rank() == 0)) {
    Record record = detail::build_record(
        id, s.fingerprint,
        detail::TuningOutcome{s.options.measurement, s.options.timer->flushes_l2(), report.candidates,
                              report.best, comm.size(), report.split_ranks, report.timer,
                              s.options.timer->clocks()});
    if (refreshed) {
      refreshed->utc = record.created_utc;
      record.refreshed = std::move(refreshed);
    }
    record.warm_start = std::move(warm_start);
    record.pruned = request.pruned;
    record.prepared = report.prepared;
    report.record_path = s.stores.save(record, store_writer(comm));
    if (report.record_path) log.write("record " + report.record_path->string());
  }
  if (request.verbose) detail::emit(MessageKind::table, format_table(report));
  return report;
}

std::vector<std::size_t> split_share(std::size_t count, int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    throw std::invalid_argument("disttune: rank " + std::to_string(rank) + " is not one of " + std::to_string(ranks));
  }
  std::vector<std::size_t> share;
  for (std::size_t i = static_cast<std::size_t>(rank); i < count; i += static_cast<std::size_t>(ranks)) {
    share.push_back(i);
  }
  return share;
}

}  // namespace disttune
