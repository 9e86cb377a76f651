// ContextualAutotuner: runs the outer function until its kernels are tuned, then once more.
#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "context_log.hpp"
#include "disttune/context.hpp"
#include "key_tuning.hpp"
#include "collective/rank_agreement.hpp"
#include "run_agreement.hpp"
#include "util/utc_time.hpp"

namespace disttune {
namespace {

/// The one active run of this process.
std::mutex active_mutex;
std::atomic<ContextualAutotuner*> active_tuner{nullptr};
std::string active_name;  // guarded by active_mutex

/// Registers a run as the active one for its lifetime; refuses a second one.
class ActiveRun {
 public:
  explicit ActiveRun(ContextualAutotuner* tuner) {
    std::lock_guard lock(active_mutex);
    if (active_tuner.load() != nullptr) {
      throw ContextualRunActive("disttune: cannot start contextual tuning of '" + tuner->function_name() +
                                "': contextual tuning of '" + active_name +
                                "' is running in this process (contextual runs cannot be nested "
                                "or run concurrently)");
    }
    active_name = tuner->function_name();
    active_tuner.store(tuner);
  }
  ~ActiveRun() {
    std::lock_guard lock(active_mutex);
    active_tuner.store(nullptr);
    active_name.clear();
  }
  ActiveRun(const ActiveRun&) = delete;
  ActiveRun& operator=(const ActiveRun&) = delete;
};

std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

/// Appends one launch to the text whose digest the ranks compare after the run.
void append_launch(std::string& text, const std::string& kernel, const std::string& key,
                   std::size_t candidate, char kind) {
  text += kernel;
  text += '\x1f';
  text += key;
  text += '\x1f';
  text += std::to_string(candidate);
  text += kind;
  text += '\x1e';
}

}  // namespace

/// One (kernel, key) being tuned in the current run() call, with its place in the outer runs.
struct TuningSlot {
  std::unique_ptr<detail::KeyTuning> tuning;
  int created_run = 0;             ///< outer run it was created in
  std::size_t created_at = 0;      ///< launch ordinal within that run
  bool checked = false;            ///< digest check and owed barriers done
  bool launched = false;           ///< launched in the current outer run
  std::optional<std::size_t> timed_pair;  ///< its timer pair in the current outer run
};

/// One launch of the current outer run.
struct LaunchRecord {
  TuningSlot* slot = nullptr;  ///< null: a launch of a cached or single candidate
  std::size_t candidate = 0;
};

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
  std::vector<std::unique_ptr<TuningSlot>> slots;  ///< unfinished tunings, in creation order
  std::vector<LaunchRecord> launches;              ///< this outer run's launches
  std::string launch_text;                         ///< what they were, for the digest
  std::vector<std::size_t> timed_launches;         ///< ordinals of this run's timer pairs
  std::optional<std::size_t> failed_launch;        ///< this rank's first failed launch
  std::string failure_reason;
  std::optional<std::size_t> abandoned_at;         ///< launch where a failure (any rank's) stopped the run
  std::optional<std::string> disagreement;         ///< found at a launch: the run cannot go on

  void begin_outer_run() {
    launches.clear();
    launch_text.clear();
    timed_launches.clear();
    failed_launch.reset();
    failure_reason.clear();
    abandoned_at.reset();
    disagreement.reset();
    for (auto& slot : slots) {
      slot->launched = false;
      slot->timed_pair.reset();
    }
  }

  void note_failure(std::size_t ordinal, std::string reason) {
    if (failed_launch && *failed_launch <= ordinal) return;
    failed_launch = ordinal;
    failure_reason = std::move(reason);
  }

  /// With several ranks: whether a rank failed the launch every rank just made, and the
  /// lowest such rank. Every rank then stops the outer run at this same launch, before
  /// the collectives the outer function itself would make after it.
  std::optional<int> vote_on_failure(bool failed_here, std::size_t ordinal) {
    const detail::Agreed agreed = detail::agree_at_checkpoint(
        *comm, detail::ContextMaker{function, "", timeout},
        detail::Position{detail::Checkpoint::launch, failed_here ? std::optional<std::size_t>(ordinal) : std::nullopt,
                         false, launches.size(), sha256_hex(launch_text)},
        outer_runs);
    if (agreed.disagreement) {
      disagreement = agreed.disagreement;
      throw RankDisagreement(*agreed.disagreement);
    }
    if (!agreed.failed_launch) return std::nullopt;
    return agreed.failed_rank;
  }

  /// Digest check of a tuning new in this run, then the barriers owed before its first run.
  void settle_new(TuningSlot& slot) {
    if (slot.checked) return;
    const detail::ContextMaker& context = slot.tuning->context();
    detail::check_ranks_agree(*comm, context,
                              FunctionIdentity{slot.tuning->kernel_name(), slot.tuning->kernel_name()},
                              slot.tuning->key(), slot.tuning->candidates(), measurement, *timer);
    slot.tuning->settle_owed();
    slot.checked = true;
  }

  /// Moves the finished tunings into their kernels' caches; throws if every candidate failed.
  void retire_finished() {
    for (auto it = slots.begin(); it != slots.end();) {
      detail::KeyTuning& tuning = *(*it)->tuning;
      if (!tuning.finished()) {
        ++it;
        continue;
      }
      std::optional<KernelChoice> choice = tuning.choice();
      if (!choice) {
        std::string text = "disttune: every config of kernel '" + tuning.kernel_name() +
                           "' failed for key " + tuning.key() + " in contextual tuning of '" + function + "':";
        for (std::size_t i = 0; i < tuning.tuning().results().size(); ++i) {
          text += "\n  [" + std::to_string(i) + "] " + tuning.candidates()[i] + ": " +
                  tuning.tuning().results()[i].error;
        }
        log->write(text);
        throw std::runtime_error(text);
      }
      log->write(tuning.log_prefix() + " | best-config-id: " + std::to_string(choice->best) +
                 " | best-config: " + choice->config +
                 " | best-latency: " + detail::format_ms(choice->candidates[choice->best].agreed_ms) + " ms");
      if (KernelTuningState* kernel = tuning.kernel()) kernel->remember(std::move(*choice));
      it = slots.erase(it);
    }
  }

  /// After the outer function returned or threw. Returns true if this run was the final one.
  bool end_outer_run(std::exception_ptr error) {
    const int run = outer_runs - 1;
    if (disagreement) throw RankDisagreement(*disagreement);  // the ranks no longer pair up
    const std::exception_ptr outer_error = abandoned_at ? nullptr : error;
    std::vector<double> samples;
    if (!timed_launches.empty()) {
      try {
        samples = timer->collect();
        if (samples.size() != timed_launches.size()) {
          throw std::runtime_error("returned " + std::to_string(samples.size()) + " times for " +
                                   std::to_string(timed_launches.size()) + " timed runs");
        }
      } catch (const std::exception& e) {
        if (!outer_error) note_failure(timed_launches.front(), std::string("timer: ") + e.what());
      }
    }

    const detail::Agreed agreed = detail::agree_at_checkpoint(
        *comm, detail::ContextMaker{function, "", timeout},
        detail::Position{detail::Checkpoint::run_end, failed_launch, outer_error != nullptr, launches.size(),
                         sha256_hex(launch_text)},
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
    const bool tuned_here = std::any_of(launches.begin(), launches.end(),
                                        [](const LaunchRecord& launch) { return launch.slot != nullptr; });
    for (auto& slot : slots) {
      settle_new(*slot);
      if (!slot->launched) continue;
      const std::optional<double> sample =
          slot->timed_pair ? std::optional<double>(samples.at(*slot->timed_pair)) : std::nullopt;
      slot->tuning->commit(sample);
    }
    retire_finished();
    if (tuned_here) return false;
    for (const auto& slot : slots) {
      log->write(slot->tuning->log_prefix() + " | not launched in the final outer run: left untuned");
    }
    slots.clear();
    log->write("function: " + function + " | final outer-run: " + std::to_string(run) +
               " with every best config | outer runs: " + std::to_string(outer_runs));
    return true;
  }

  /// Every rank abandons the outer run at launch `ordinal`: that launch's candidate fails,
  /// nothing else of the run counts, tunings created after it are dropped.
  void abandon(int run, std::size_t ordinal, int failed_rank) {
    if (ordinal >= launches.size() || launches[ordinal].slot == nullptr) {
      throw RankDisagreement("disttune: rank " + std::to_string(failed_rank) + " failed a candidate at launch " +
                             std::to_string(ordinal) + " of outer run " + std::to_string(run) + " of '" +
                             function + "', but this rank's launch " + std::to_string(ordinal) +
                             (ordinal >= launches.size() ? " did not happen" : " was no tuning launch") +
                             "; every rank must run the same kernels in the same order");
    }
    TuningSlot* failed = launches[ordinal].slot;
    const std::string reason = failed_launch == ordinal
                                   ? failure_reason
                                   : "failed on rank " + std::to_string(failed_rank);
    log->write("function: " + function + " | outer-run: " + std::to_string(run) + " abandoned at launch " +
               std::to_string(ordinal) + ": kernel " + failed->tuning->kernel_name() + " | key: " +
               failed->tuning->key() + " | " +
               failed->tuning->describe_candidate(launches[ordinal].candidate) + " | failed on rank " +
               std::to_string(failed_rank) + ": " + reason + " | restarting the outer run");
    std::erase_if(slots, [&](const std::unique_ptr<TuningSlot>& slot) {
      return slot->created_run == run && slot->created_at > ordinal;
    });
    for (auto& slot : slots) {
      settle_new(*slot);
      if (slot.get() == failed) slot->tuning->fail_pending(reason);
    }
    retire_finished();
  }

  /// Clears what an interrupted run() left behind, so the tuner is usable again.
  void reset_after_error() {
    slots.clear();
    launches.clear();
    timed_launches.clear();
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
  s.measurement.warmup_runs = options.n_warmup;
  s.measurement.timed_runs = options.n_repeat;
  s.measurement.statistic = options.statistic;
  s.measurement.strategy = "exhaustive";  // the spec's contextual method: every candidate, in turn
  if (options.n_warmup < 0) {
    throw std::invalid_argument("disttune: n_warmup must be >= 0, got " + std::to_string(options.n_warmup));
  }
  if (options.n_repeat < 1) {
    throw std::invalid_argument("disttune: n_repeat must be >= 1, got " + std::to_string(options.n_repeat));
  }
  validate(s.measurement);
  if (options.is_dist && !options.communicator) {
    throw std::invalid_argument("disttune: contextual tuning of '" + function_name +
                                "' with is_dist needs a communicator (e.g. make_mpi_communicator())");
  }
  s.timer = options.timer ? options.timer : std::make_shared<CpuTimer>();
  s.comm = options.is_dist ? options.communicator : std::make_shared<SingleProcessCommunicator>();
  s.log_rank = options.communicator ? options.communicator->rank() : 0;
  s.timeout = options.collective_timeout.value_or(default_collective_timeout());
  s.function = std::move(function_name);
  s.options = std::move(options);
}

ContextualAutotuner::~ContextualAutotuner() = default;

ContextualAutotuner* ContextualAutotuner::active() { return active_tuner.load(); }

void ContextualAutotuner::kernel_destroyed(const KernelTuningState& kernel) noexcept {
  ContextualAutotuner* tuner = active_tuner.load();
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
  ActiveRun active(this);
  State& s = *state_;
  s.owner = std::this_thread::get_id();
  s.outer_runs = 0;
  s.slots.clear();
  s.log = std::make_unique<detail::ContextLog>(s.options.log_dir, s.log_rank);
  s.log->write("function: " + s.function + " | contextual tuning started " + detail::utc_iso_now() +
               " | rank " + std::to_string(s.comm->rank()) + " of " + std::to_string(s.comm->size()) +
               " | n_warmup: " + std::to_string(s.measurement.warmup_runs) +
               " | n_repeat: " + std::to_string(s.measurement.timed_runs) +
               " | statistic: " + to_string(s.measurement.statistic) + " | timer: " + s.timer->name());
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
                 std::to_string(s.outer_runs - 1) + ": " + describe_exception(std::current_exception()));
    s.reset_after_error();
    s.log.reset();
    throw;
  }
  s.log.reset();
}

std::size_t ContextualAutotuner::launch(KernelTuningState& kernel, const std::string& key,
                                        const std::vector<std::string>& candidates,
                                        const std::function<void(std::size_t)>& launch_one) {
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
  if (s.abandoned_at) {
    throw OuterRunAbandoned("disttune: outer run of '" + s.function + "' is being abandoned after a failed "
                            "candidate; let this exception propagate");
  }
  if (candidates.empty()) throw std::invalid_argument("disttune: kernel '" + kernel.name() + "' has no candidates");
  const std::size_t ordinal = s.launches.size();

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
      s.launches.push_back(LaunchRecord{nullptr, *fixed});
      append_launch(s.launch_text, kernel.name(), key, *fixed, 'c');
      launch_one(*fixed);
      return *fixed;
    }
    s.timer->begin_tuning();
    auto fresh = std::make_unique<TuningSlot>();
    fresh->tuning = std::make_unique<detail::KeyTuning>(kernel, key, candidates, s.measurement, s.function,
                                                        *s.comm, s.timeout, *s.log);
    fresh->created_run = s.outer_runs;
    fresh->created_at = ordinal;
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
  s.launches.push_back(LaunchRecord{slot, step.candidate});
  append_launch(s.launch_text, kernel.name(), key, step.candidate, timed ? 't' : 'w');
  s.in_launch = true;
  struct LaunchDone {
    bool& flag;
    ~LaunchDone() { flag = false; }
  } done{s.in_launch};
  if (timed) {
    s.timer->prepare_timed_run();
    s.timer->start();
    slot->timed_pair = s.timed_launches.size();
    s.timed_launches.push_back(ordinal);
  }
  std::optional<std::string> failure;
  try {
    launch_one(step.candidate);
  } catch (...) {
    failure = describe_exception(std::current_exception());
  }
  if (timed) s.timer->stop();
  if (failure) s.note_failure(ordinal, *failure);
  // The rank that failed at this launch, or -1 (an int: GCC 12 misreads an optional here).
  int failed_rank = failure ? s.comm->rank() : -1;
  if (s.comm->size() > 1) failed_rank = s.vote_on_failure(failure.has_value(), ordinal).value_or(-1);
  if (failed_rank >= 0) {
    s.abandoned_at = ordinal;
    throw OuterRunAbandoned("disttune: kernel '" + kernel.name() + "' " +
                            slot->tuning->describe_candidate(step.candidate) + " failed" +
                            (failure ? ": " + *failure : " on rank " + std::to_string(failed_rank)) +
                            "; the outer run of '" + s.function + "' is abandoned and restarted");
  }
  return step.candidate;
}

}  // namespace disttune
