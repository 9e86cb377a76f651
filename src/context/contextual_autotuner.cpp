// ContextualAutotuner: runs the outer function until its kernels are tuned, then once more.
#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <thread>

#include "context/active_run.hpp"
#include "context/context_log.hpp"
#include "context/failure_vote.hpp"
#include "context/key_tuning.hpp"
#include "context/launch_ledger.hpp"
#include "context/outer_run_restart.hpp"
#include "context/retirement.hpp"
#include "context/run_agreement.hpp"
#include "disttune/context.hpp"
#include "disttune/deadline.hpp"
#include "disttune/settings.hpp"
#include "disttune/store_chain.hpp"
#include "engine/rank_agreement.hpp"
#include "engine/warm_start_prior.hpp"
#include "report/unknown_settings.hpp"
#include "util/exception_text.hpp"
#include "util/utc_time.hpp"

namespace disttune {
namespace {

/// The prior of a contextual tuning: neighbour_prior over a kernel's cached choices of other
/// keys (default_key_distance).
WarmStart kernel_prior(const std::vector<KernelChoice>& choices, const std::string& key,
                       const std::vector<std::string>& candidates) {
  std::vector<Record> records;
  for (const KernelChoice& choice : choices) {
    if (choice.candidates.empty() || choice.best >= choice.candidates.size()) continue;
    Record record;
    record.id.key = choice.key;
    record.candidates = choice.candidates;
    record.best_index = choice.best;
    records.push_back(std::move(record));
  }
  return detail::neighbour_prior(records, key, candidates, nullptr);
}

}  // namespace

using detail::LaunchRecord;
using detail::TuningSlot;

struct ContextualAutotuner::State {
  std::string function;
  ContextOptions options;
  Measurement measurement;
  std::chrono::milliseconds timeout{};
  std::shared_ptr<Timer> timer;
  std::shared_ptr<Communicator> comm;  ///< single process unless is_dist
  int log_rank = 0;
  int outer_runs = 0;

  // The active run.
  std::thread::id owner;
  bool in_launch = false;
  std::unique_ptr<detail::ContextLog> log;
  detail::TuningSlots slots;                       ///< unfinished tunings, in creation order
  detail::LaunchLedger ledger;                     ///< this outer run's launches

  void begin_outer_run() {
    ledger.clear();
    for (auto& slot : slots) {
      slot->launched = false;
      slot->timed_pair.reset();
    }
  }

  /// Digest check of a tuning new in this run, then the barriers owed before its first run.
  void settle_new(TuningSlot& slot) {
    if (slot.checked) return;
    const detail::ContextMaker& context = slot.tuning->context();
    detail::check_ranks_agree(*comm, context,
                              FunctionIdentity{slot.tuning->kernel_name(), slot.tuning->kernel_name()},
                              slot.tuning->key(), slot.tuning->candidates(), measurement, *timer,
                              false);
    slot.tuning->settle_owed();
    slot.checked = true;
  }

  /// After the outer function returned or threw. Returns true if this run was the final one.
  bool end_outer_run(std::exception_ptr error) {
    const int run = outer_runs - 1;
    if (ledger.disagreement) throw RankDisagreement(*ledger.disagreement);  // the ranks no longer pair up
    const std::exception_ptr outer_error = ledger.abandoned_at ? nullptr : error;
    const std::vector<std::size_t>& timed_launches = ledger.timed_launches();
    std::vector<double> samples;
    if (!timed_launches.empty()) {
      try {
        samples = timer->collect();
        if (samples.size() != timed_launches.size()) {
          throw std::runtime_error("returned " + std::to_string(samples.size()) + " times for " +
                                   std::to_string(timed_launches.size()) + " timed runs");
        }
      } catch (const std::exception& e) {
        if (!outer_error) ledger.note_failure(timed_launches.front(), std::string("timer: ") + e.what());
      }
    }

    const detail::Agreed agreed = detail::agree_at_checkpoint(
        *comm, detail::ContextMaker{function, "", timeout},
        detail::Position{detail::Checkpoint::run_end, ledger.failed_launch(), outer_error != nullptr,
                         ledger.size(), ledger.digest()},
        run);
    if (agreed.disagreement) {
      if (outer_error) std::rethrow_exception(outer_error);
      throw RankDisagreement(*agreed.disagreement);
    }
    if (agreed.outer_failed_rank) {
      if (outer_error) std::rethrow_exception(outer_error);
      throw std::runtime_error("disttune: the outer function of '" + function + "' failed on rank " +
                               std::to_string(*agreed.outer_failed_rank) + " in outer run " +
                               std::to_string(run) + "; contextual tuning stops on every rank");
    }
    if (agreed.failed_launch) {
      abandon(run, *agreed.failed_launch, agreed.failed_rank);
      return false;
    }

    for (const auto& slot : slots) {
      if (slot->tuning->kernel() == nullptr) {
        throw std::logic_error("disttune: kernel '" + slot->tuning->kernel_name() + "' was destroyed during "
                               "contextual tuning of '" + function + "' while its key " + slot->tuning->key() +
                               " was being tuned; tunable kernels must outlive run() (define them outside "
                               "the outer function)");
      }
    }
    const bool tuned_here = std::any_of(ledger.launches().begin(), ledger.launches().end(),
                                        [](const LaunchRecord& launch) { return launch.slot != nullptr; });
    for (auto& slot : slots) {
      settle_new(*slot);
      if (!slot->launched) continue;
      const std::optional<double> sample =
          slot->timed_pair ? std::optional<double>(samples.at(*slot->timed_pair)) : std::nullopt;
      slot->tuning->commit(sample);
    }
    detail::retire_finished(slots, *log, function, *timer);
    if (tuned_here) return false;
    for (const auto& slot : slots) {
      log->write(slot->tuning->log_prefix() + " | not launched in the final outer run: left untuned");
    }
    slots.clear();
    // A run that tuned nothing (every kernel already tuned) logs nothing.
    if (log->written()) {
      log->write("function: " + function + " | final outer-run: " + std::to_string(run) +
                 " with every best config | outer runs: " + std::to_string(outer_runs));
    }
    return true;
  }

  void abandon(int run, std::size_t ordinal, int failed_rank) {
    detail::abandon_outer_run(slots, ledger, run, ordinal, failed_rank,
                              [this](TuningSlot& slot) { settle_new(slot); }, *log, function, *timer);
  }

  /// Clears what an interrupted run() left behind, so the tuner is usable again.
  void reset_after_error() {
    slots.clear();
    ledger.clear();
    try {
      (void)timer->collect();
    } catch (const std::exception&) {
      // Pairs of a broken run: nothing to keep.
    }
  }
};

ContextualAutotuner::ContextualAutotuner(std::string function_name, ContextOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  if (function_name.empty()) throw std::invalid_argument("disttune: a contextual tuner needs a function name");
  check_environment();
  check_store_environment();  // unused here, but refused alike (docs/settings.md)
  detail::warn_unknown_settings();
  s.measurement.warmup_runs = options.n_warmup;
  s.measurement.timed_runs = options.n_repeat;
  s.measurement.statistic = options.statistic;
  s.measurement.strategy = options.strategy;
  s.measurement.strategy_options = options.strategy_options;
  (void)make_strategy(s.measurement);  // an unknown strategy or option is refused here, not at a launch
  validate_run_count(options.n_warmup, "n_warmup", 0);
  validate_run_count(options.n_repeat, "n_repeat", 1);
  if (options.is_dist && options.split_across_ranks) {
    throw InvalidSetting("disttune: contextual tuning of '" + function_name +
                         "' cannot be split across ranks with is_dist: every rank must run "
                         "the same config of a kernel at the same time (split_across_ranks is "
                         "for function-level tuning of launchers that do not communicate)");
  }
  if (options.compile_threads && *options.compile_threads < 1) {
    throw InvalidSetting("disttune: compile_threads of contextual tuning of '" + function_name +
                         "' must be at least 1");
  }
  if (!options.compile_threads) options.compile_threads = compile_threads_setting();
  if (options.is_dist && !options.communicator) {
    throw InvalidSetting("disttune: contextual tuning of '" + function_name +
                         "' with is_dist needs a communicator (e.g. make_mpi_communicator())");
  }
  s.timer = options.timer ? options.timer : std::make_shared<CpuTimer>();
  s.comm = options.is_dist ? options.communicator : std::make_shared<SingleProcessCommunicator>();
  s.ledger.keep_digest(s.comm->size() > 1);
  s.log_rank = options.communicator ? options.communicator->rank() : 0;
  if (options.collective_timeout) validate_timeout(*options.collective_timeout, "collective_timeout");
  s.timeout = options.collective_timeout.value_or(default_collective_timeout());
  s.function = std::move(function_name);
  s.options = std::move(options);
}

ContextualAutotuner::~ContextualAutotuner() = default;

ContextualAutotuner* ContextualAutotuner::active() { return detail::active_tuner(); }

void ContextualAutotuner::kernel_destroyed(const KernelTuningState& kernel) noexcept {
  ContextualAutotuner* tuner = detail::active_tuner();
  if (tuner == nullptr) return;
  for (auto& slot : tuner->state_->slots) {
    if (slot->tuning->kernel() == &kernel) slot->tuning->orphan();
  }
}

const std::string& ContextualAutotuner::function_name() const { return state_->function; }
const ContextOptions& ContextualAutotuner::options() const { return state_->options; }
int ContextualAutotuner::outer_runs() const { return state_->outer_runs; }

std::filesystem::path ContextualAutotuner::log_path() const {
  return detail::ContextLog::path_for(state_->options.log_dir, state_->log_rank);
}

void ContextualAutotuner::run(const std::function<void()>& outer) {
  if (!outer) throw std::invalid_argument("disttune: contextual tuning of '" + function_name() + "' got no function");
  detail::ActiveRun active(this);
  State& s = *state_;
  s.owner = std::this_thread::get_id();
  s.outer_runs = 0;
  s.slots.clear();
  const auto started = std::chrono::system_clock::now();
  s.log = std::make_unique<detail::ContextLog>(s.options.log_dir, s.log_rank, [&s, started] {
    return "function: " + s.function + " | contextual tuning started " + detail::utc_iso(started) + " | rank " +
           std::to_string(s.comm->rank()) + " of " + std::to_string(s.comm->size()) +
           " | n_warmup: " + std::to_string(s.measurement.warmup_runs) +
           " | n_repeat: " + std::to_string(s.measurement.timed_runs) +
           " | statistic: " + to_string(s.measurement.statistic) + " | timer: " + s.timer->name();
  });
  try {
    for (bool final = false; !final;) {
      s.begin_outer_run();
      std::exception_ptr error;
      try {
        outer();
      } catch (...) {
        error = std::current_exception();
      }
      ++s.outer_runs;
      final = s.end_outer_run(error);
    }
  } catch (...) {
    s.log->write("function: " + s.function + " | contextual tuning stopped in outer run " +
                 std::to_string(s.outer_runs - 1) + ": " + detail::exception_text(std::current_exception()));
    s.reset_after_error();
    s.log.reset();
    throw;
  }
  s.log.reset();
}

std::size_t ContextualAutotuner::launch(KernelTuningState& kernel, const std::string& key,
                                        const std::vector<std::string>& candidates,
                                        const std::function<void(std::size_t)>& launch_one,
                                        const PrepareAhead& prepare_ahead) {
  State& s = *state_;
  if (active() != this) {
    throw std::logic_error("disttune: launch() on contextual tuner '" + s.function + "' outside its run()");
  }
  if (std::this_thread::get_id() != s.owner) {
    throw std::logic_error("disttune: kernel '" + kernel.name() + "' was launched from another thread during "
                           "contextual tuning of '" + s.function + "'; launch kernels from run()'s thread");
  }
  if (s.in_launch) {
    throw std::logic_error("disttune: kernel '" + kernel.name() + "' was launched from inside another "
                           "kernel's launcher during contextual tuning of '" + s.function + "'");
  }
  if (s.ledger.abandoned_at) {
    throw OuterRunAbandoned("disttune: outer run of '" + s.function + "' is being abandoned after a failed "
                            "candidate; let this exception propagate");
  }
  if (candidates.empty()) throw std::invalid_argument("disttune: kernel '" + kernel.name() + "' has no candidates");

  auto found = std::find_if(s.slots.begin(), s.slots.end(), [&](const std::unique_ptr<TuningSlot>& slot) {
    return slot->tuning->kernel() == &kernel && slot->tuning->key() == key;
  });
  TuningSlot* slot = found == s.slots.end() ? nullptr : found->get();
  if (slot == nullptr) {
    std::optional<std::size_t> fixed = kernel.cached_index(key, candidates);
    if (!fixed && candidates.size() == 1) {
      kernel.remember(KernelChoice{key, 0, candidates.front(), {}});
      fixed = 0;
    }
    if (fixed) {
      s.ledger.record(nullptr, kernel.name(), key, *fixed, 'c');
      launch_one(*fixed);
      return *fixed;
    }
    s.timer->begin_tuning();
    auto fresh = std::make_unique<TuningSlot>();
    // Warm start from the kernel's choices for other keys: agreed choices, the same on
    // every rank, so the prior needs no vote.
    std::vector<std::size_t> prior;
    if (warm_start_setting()) prior = kernel_prior(kernel.choices(), key, candidates).prior;
    fresh->tuning = std::make_unique<detail::KeyTuning>(kernel, key, candidates, s.measurement, s.function,
                                                        *s.comm, s.timeout, *s.log, std::move(prior),
                                                        prepare_ahead, *s.options.compile_threads);
    fresh->created_run = s.outer_runs;
    fresh->created_at = s.ledger.size();
    slot = fresh.get();
    s.slots.push_back(std::move(fresh));
  } else if (slot->tuning->candidates() != candidates) {
    throw std::invalid_argument("disttune: kernel '" + kernel.name() + "' changed its candidate list for key " +
                                key + " during contextual tuning of '" + s.function + "'");
  }

  // The first launch of a tuning in an outer run does its run step; later ones in the same
  // run use the same candidate untimed, so the run's context stays the one of real use.
  const Step& step = slot->tuning->pending();
  const bool timed = !slot->launched && step.kind == StepKind::timed;
  slot->launched = true;
  const std::size_t ordinal = s.ledger.record(slot, kernel.name(), key, step.candidate, timed ? 't' : 'w');
  s.in_launch = true;
  struct LaunchDone {
    bool& flag;
    ~LaunchDone() { flag = false; }
  } done{s.in_launch};
  if (timed) {
    s.timer->prepare_timed_run();
    s.timer->start();
    slot->timed_pair = s.ledger.note_timed(ordinal);
  }
  std::optional<std::string> failure;
  try {
    launch_one(step.candidate);
  } catch (...) {
    failure = detail::exception_text(std::current_exception());
  }
  if (timed) s.timer->stop();
  if (failure) s.ledger.note_failure(ordinal, *failure);
  // The rank that failed at this launch, or -1 (an int: GCC 12 misreads an optional here).
  int failed_rank = failure ? s.comm->rank() : -1;
  if (s.comm->size() > 1) {
    failed_rank = detail::vote_on_launch_failure(*s.comm, detail::ContextMaker{s.function, "", s.timeout}, s.ledger,
                                                 failure.has_value(), ordinal, s.outer_runs)
                      .value_or(-1);
  }
  if (failed_rank >= 0) {
    s.ledger.abandoned_at = ordinal;
    throw OuterRunAbandoned("disttune: kernel '" + kernel.name() + "' " +
                            slot->tuning->describe_candidate(step.candidate) + " failed" +
                            (failure ? ": " + *failure : " on rank " + std::to_string(failed_rank)) +
                            "; the outer run of '" + s.function + "' is abandoned and restarted");
  }
  return step.candidate;
}

}  // namespace disttune
