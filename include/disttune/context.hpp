// Contextual autotuning: tunable kernels measured inside repeated runs of their real outer call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "disttune/communicator.hpp"
#include "disttune/config.hpp"
#include "disttune/error.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/key_hash.hpp"
#include "disttune/key_memo.hpp"
#include "disttune/measurement.hpp"
#include "disttune/timer.hpp"
#include "disttune/tuning.hpp"

namespace disttune {

/// Settings of a contextual tuner (the spec's contextual_autotune arguments, and more).
struct ContextOptions {
  bool is_dist = false;  ///< agree across the ranks of `communicator` (times: MAX over ranks)
  int n_warmup = 3;      ///< untimed runs of each candidate (the upstream default)
  int n_repeat = 5;      ///< timed runs of each candidate (the upstream default)
  Statistic statistic = Statistic::mean;  ///< of a candidate's samples (upstream: mean)
  /// The registered strategy of every key's tuning: the spec's "exhaustive" (every candidate,
  /// in turn), or e.g. "search" for large spaces; an unknown name is InvalidSetting.
  std::string strategy = "exhaustive";
  /// The strategy's own options (Measurement::strategy_options).
  std::map<std::string, std::string> strategy_options;
  /// Default: CpuTimer. An L2 flush before each timed launch is the timer's
  /// (CudaTimerOptions::flush_l2); the ranks compare timer->flushes_l2().
  std::shared_ptr<Timer> timer;
  std::shared_ptr<Communicator> communicator;  ///< required when is_dist; else only names the log
  /// Deadline of each engine collective; default: default_collective_timeout().
  std::optional<std::chrono::milliseconds> collective_timeout;
  /// Where rank-<rank>.log is appended.
  std::filesystem::path log_dir = ".autotune_logs";
  /// Rank-split tuning (TunerOptions::split_across_ranks) is refused with is_dist: every rank
  /// must run the same config at the same time. Without is_dist there is one rank: no effect.
  bool split_across_ranks = false;
  /// The front end's compile threads, told to each key's strategy (SpaceInfo::compile_threads:
  /// a search's rounds and guesses fill that many); nullopt: compile_threads_setting(), the
  /// process's compile pool. At least 1 (else std::invalid_argument).
  std::optional<std::size_t> compile_threads;
};

/// A kernel's choice for one key, and the measurements it came from.
struct KernelChoice {
  std::string key;     ///< canonical key text
  std::size_t best = 0;  ///< index into the candidate list it was chosen from
  std::string config;  ///< canonical JSON of the chosen candidate
  /// The tuning's candidates (agreed times, this rank's samples, failures), in order;
  /// empty when there was a single candidate and nothing was measured.
  std::vector<CandidateResult> candidates;
};

/// The engine-side state of one tunable kernel: its name and its in-process cache
/// (key -> choice). Owned by the kernel (TunableKernel, or a Python kernel wrapper) and
/// shared by contextual and isolated tuning. Thread-safe.
class KernelTuningState {
 public:
  /// `name` appears in logs and errors; throws std::invalid_argument if empty.
  explicit KernelTuningState(std::string name);
  /// Destroying a kernel whose key is being tuned by the active run makes that run fail
  /// with std::logic_error at the end of the outer run (kernels must outlive run()).
  ~KernelTuningState();
  KernelTuningState(const KernelTuningState&) = delete;
  KernelTuningState& operator=(const KernelTuningState&) = delete;

  const std::string& name() const { return name_; }

  /// The index in `candidates` of the choice cached for `key`, if there is one and its
  /// config is still among `candidates` (else nullopt: a miss).
  std::optional<std::size_t> cached_index(const std::string& key,
                                          const std::vector<std::string>& candidates) const;
  /// The choice cached for `key`, if any.
  std::optional<KernelChoice> choice(const std::string& key) const;
  /// The most recently remembered choice (the spec's `best_config` and its timings).
  std::optional<KernelChoice> last_choice() const;
  /// Every cached choice (a warm start reads those of the other keys); in no set order.
  std::vector<KernelChoice> choices() const;
  /// Caches `choice` for choice.key (replacing an older one) and makes it the last choice.
  void remember(KernelChoice choice);
  /// Empties the cache.
  void clear();
  /// Grows whenever a cached choice is replaced or the cache is emptied (not when a new key
  /// is added): what cached_index answered for a key still holds while the epoch is the same.
  std::uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

 private:
  std::string name_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, KernelChoice> cache_;
  std::optional<std::string> last_key_;
  std::atomic<std::uint64_t> epoch_{0};  ///< written under mutex_
};

/// A contextual run was started while another is active in this process (nesting or
/// concurrent use). Nothing of either run is changed by the refused start.
class ContextualRunActive : public ErrorAs<std::logic_error> {
 public:
  using ErrorAs::ErrorAs;
};

/// Thrown by ContextualAutotuner::launch() when the candidate it launched failed: the outer
/// run is abandoned (let it propagate) and restarted without that candidate.
class OuterRunAbandoned : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Starts preparing (e.g. compiling) these candidates of a kernel's tuning and returns at
/// once (ContextualAutotuner::launch).
using PrepareAhead = std::function<void(const std::vector<std::size_t>& candidates)>;

/// The contextual tuner of one outer function. run() calls the outer function again and
/// again; each tunable kernel launched inside (through launch()) is tuned per key by its
/// own Tuning, one run step (warm-up or timed) per outer run, in the real context; kernels
/// that finished use their best config; once every kernel seen has finished, one more
/// outer run uses all best configs, and that run is the last. One run is active per
/// process at a time. With is_dist the engine's collectives (digest checks, barriers,
/// reductions, the agreement on each run) happen between outer runs, plus a failure vote
/// after each launch of a kernel being tuned; so every rank must make the same launches in
/// the same order. A kernel launched several times in one outer run uses one candidate for
/// all of them; only the first is a step (and timed).
class ContextualAutotuner {
 public:
  /// Throws std::invalid_argument for an empty name, bad counts, compile_threads 0, is_dist
  /// without a communicator, or is_dist with split_across_ranks.
  ContextualAutotuner(std::string function_name, ContextOptions options = {});
  ~ContextualAutotuner();
  ContextualAutotuner(const ContextualAutotuner&) = delete;
  ContextualAutotuner& operator=(const ContextualAutotuner&) = delete;

  /// Runs `outer` until tuning is done, as described above; the last call of `outer` is the
  /// final run with every best config. A run in which a candidate failed is abandoned and
  /// restarted (on every rank) without it. Throws ContextualRunActive if a run is active,
  /// std::runtime_error if every candidate of a kernel failed, RankDisagreement or
  /// CollectiveTimeout across ranks, and rethrows what `outer` throws otherwise. The tuner
  /// is usable again after any of these.
  void run(const std::function<void()>& outer);

  /// The tuner whose run() is active in this process, or nullptr.
  static ContextualAutotuner* active();

  /// For a kernel launched inside the active run, on run()'s thread: makes exactly one
  /// launch, `launch_one(i)`, of the candidate the kernel's tuning for `key` wants now
  /// (warm-up; timed between timer marks; the cached best once done; the same candidate
  /// again, untimed, for a later launch in the same outer run) and returns i.
  /// `candidates` are the canonical JSON texts of the kernel's configs, in order. If
  /// `launch_one` throws (on any rank, with is_dist), the candidate is recorded failed and
  /// OuterRunAbandoned is thrown on every rank at this launch. Throws std::logic_error if
  /// called outside the run, from another thread, or from inside another launcher.
  /// `prepare_ahead`, given at a key's first launch, is told which candidates the tuning will
  /// launch next, before their turn (the round's and the strategy's ahead(), each once): a
  /// front end that compiles in the background starts those compiles and returns at once,
  /// and each candidate's launch waits for its own. Without it nothing is named ahead.
  std::size_t launch(KernelTuningState& kernel, const std::string& key,
                     const std::vector<std::string>& candidates,
                     const std::function<void(std::size_t)>& launch_one,
                     const PrepareAhead& prepare_ahead = {});

  const std::string& function_name() const;
  const ContextOptions& options() const;
  /// How many times the last run() called the outer function (the final run included).
  int outer_runs() const;
  /// This process's log file: <log_dir>/rank-<rank>.log.
  std::filesystem::path log_path() const;

 private:
  friend class KernelTuningState;
  /// Called by a KernelTuningState's destructor while a run may hold its tuning.
  static void kernel_destroyed(const KernelTuningState& kernel) noexcept;

  struct State;
  std::unique_ptr<State> state_;
};

template <class Config, class Key, class Signature>
class TunableKernel;

/// What a tunable kernel is made of. `Config` needs `Value describe(const Config&)` (found by
/// argument-dependent lookup); so does `Key`.
template <class Config, class Key, class Result, class... Args>
struct TunableKernelSpec {
  std::string name;                                       ///< for logs and errors
  std::vector<Config> configs;                            ///< candidates, in order
  std::function<Key(const Args&...)> key;                 ///< the key of a launch
  std::function<Result(const Config&, Args...)> launch;   ///< launches with a config
  /// How it tunes itself outside a contextual run (measurement, timer, communicator);
  /// the disk cache is always off, like triton.autotune's in-process cache.
  TunerOptions isolated;
};

/// The C++ counterpart of a triton.autotune kernel. Inside a contextual run it launches
/// through the active ContextualAutotuner; outside one it uses its cached choice for the
/// key, or tunes itself in isolation on a new key (FunctionTuner) and remembers the result.
/// Where EqualKeysDescribeAlike<Key> holds, the kernel keeps, per key value, the key's
/// canonical text (built once) and, outside a run, the config the cache held for it while
/// the state's epoch is unchanged: a cached launch is then a lock-free lookup by value.
/// Other keys build their text at every launch and look it up in the state's locked map.
template <class Config, class Key, class Result, class... Args>
class TunableKernel<Config, Key, Result(Args...)> {
  static constexpr bool kKeyedByValue = EqualKeysDescribeAlike<Key>::value;

 public:
  using Spec = TunableKernelSpec<Config, Key, Result, Args...>;

  /// Throws std::invalid_argument for an empty name or config list, or a missing function.
  explicit TunableKernel(Spec spec) : spec_(checked(std::move(spec))), state_(spec_.name) {
    for (const auto& config : spec_.configs) candidates_.push_back(canonical_json(describe(config)));
    TunerOptions isolated = spec_.isolated;
    isolated.disk_cache = false;
    isolated_ = std::make_unique<FunctionTuner>(FunctionIdentity{spec_.name, "tunable-kernel"},
                                                std::move(isolated));
  }

  /// Launches with the config chosen as described above and returns the launcher's result.
  Result operator()(Args... args) {
    if constexpr (kKeyedByValue) {
      const Key key = spec_.key(args...);
      typename Memo::Entry entry;
      const typename Memo::Entry* known = keys_.find(key, entry) ? &entry : nullptr;
      if (ContextualAutotuner* tuner = ContextualAutotuner::active()) {
        return contextual_launch(*tuner, keys_.text(key, known), args...);
      }
      const std::uint64_t epoch = state_.epoch();  // before the state's cache is read
      if (known != nullptr && known->epoch == epoch) [[likely]] {
        return spec_.launch(spec_.configs[known->config], args...);
      }
      const std::string& text = keys_.text(key, known);
      const std::size_t chosen = isolated_choice(text, args...);
      keys_.note_config(key, text, chosen, epoch);
      return spec_.launch(spec_.configs[chosen], args...);
    } else {
      const std::string key = canonical_json(describe(spec_.key(args...)));
      if (ContextualAutotuner* tuner = ContextualAutotuner::active()) return contextual_launch(*tuner, key, args...);
      return spec_.launch(spec_.configs[isolated_choice(key, args...)], args...);
    }
  }

  /// The config of the most recent choice (tuned or cached), if any: the spec's best_config.
  std::optional<Config> best_config() const {
    const std::optional<KernelChoice> last = state_.last_choice();
    return last ? config_of(*last) : std::nullopt;
  }
  /// The config cached for `key`, if any.
  std::optional<Config> cached_config(const Key& key) const {
    const std::optional<KernelChoice> hit = state_.choice(canonical_json(describe(key)));
    return hit ? config_of(*hit) : std::nullopt;
  }
  /// The most recent choice with the timings of its tuning.
  std::optional<KernelChoice> last_tuning() const { return state_.last_choice(); }

  KernelTuningState& state() { return state_; }
  const std::vector<std::string>& candidates() const { return candidates_; }
  const Spec& spec() const { return spec_; }

 private:
  static Spec checked(Spec spec) {
    if (spec.name.empty()) throw std::invalid_argument("disttune: a tunable kernel needs a name");
    if (spec.configs.empty()) {
      throw std::invalid_argument("disttune: tunable kernel '" + spec.name + "' has no configs");
    }
    if (!spec.key) throw std::invalid_argument("disttune: tunable kernel '" + spec.name + "' has no key function");
    if (!spec.launch) throw std::invalid_argument("disttune: tunable kernel '" + spec.name + "' has no launcher");
    return spec;
  }

  std::optional<Config> config_of(const KernelChoice& choice) const {
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      if (candidates_[i] == choice.config) return spec_.configs[i];
    }
    return std::nullopt;
  }

  using Memo = detail::KeyMemo<Key>;

  /// A launch inside the active run: the run's tuning of `key` decides the config.
  Result contextual_launch(ContextualAutotuner& tuner, const std::string& key, Args&... args) {
    if constexpr (std::is_void_v<Result>) {
      tuner.launch(state_, key, candidates_, [&](std::size_t i) { spec_.launch(spec_.configs[i], args...); });
    } else {
      std::optional<Result> result;
      tuner.launch(state_, key, candidates_,
                   [&](std::size_t i) { result.emplace(spec_.launch(spec_.configs[i], args...)); });
      return std::move(*result);
    }
  }

  /// The cached choice for `key`, else one tuned now in isolation (one tuning at a time).
  std::size_t isolated_choice(const std::string& key, Args&... args) {
    if (auto hit = state_.cached_index(key, candidates_)) return *hit;
    std::lock_guard lock(isolated_mutex_);
    if (auto hit = state_.cached_index(key, candidates_)) return *hit;
    KernelChoice choice{key, 0, candidates_.front(), {}};
    if (candidates_.size() > 1) {
      TuningRequest request;
      request.key = key;
      request.candidates = candidates_;
      request.run = [&](std::size_t i) { (void)spec_.launch(spec_.configs[i], args...); };
      TuningReport report = isolated_->resolve(request);
      choice = KernelChoice{key, report.best, candidates_[report.best], std::move(report.candidates)};
    }
    const std::size_t best = choice.best;
    state_.remember(std::move(choice));
    return best;
  }

  Spec spec_;
  std::vector<std::string> candidates_;
  KernelTuningState state_;
  std::unique_ptr<FunctionTuner> isolated_;
  std::mutex isolated_mutex_;
  Memo keys_;  ///< used where kKeyedByValue
};

template <class Signature>
class Contextual;

/// The spec's contextual_autotune in C++: an outer callable run through a
/// ContextualAutotuner; each call tunes what is new and returns the final run's result.
template <class Result, class... Args>
class Contextual<Result(Args...)> {
 public:
  Contextual(std::string function_name, std::function<Result(Args...)> outer,
             ContextOptions options = {})
      : outer_(std::move(outer)),
        tuner_(std::make_unique<ContextualAutotuner>(std::move(function_name), std::move(options))) {
    if (!outer_) throw std::invalid_argument("disttune: contextual '" + tuner_->function_name() + "' has no function");
  }

  /// Runs the outer callable through the tuner with these arguments (passed to every run
  /// as lvalues) and returns what its last run returned.
  Result operator()(Args... args) {
    if constexpr (std::is_void_v<Result>) {
      tuner_->run([&] { outer_(args...); });
    } else {
      std::optional<Result> result;
      tuner_->run([&] {
        result.reset();
        result.emplace(outer_(args...));
      });
      return std::move(*result);
    }
  }

  ContextualAutotuner& tuner() { return *tuner_; }

 private:
  std::function<Result(Args...)> outer_;
  std::unique_ptr<ContextualAutotuner> tuner_;
};

namespace detail {
template <class Function>
struct SignatureOf;
template <class Signature>
struct SignatureOf<std::function<Signature>> {
  using type = Signature;
};
}  // namespace detail

/// A Contextual over `outer` (a lambda or function), its signature deduced.
template <class Outer>
auto make_contextual(std::string function_name, Outer outer, ContextOptions options = {}) {
  using Signature = typename detail::SignatureOf<decltype(std::function{outer})>::type;
  return Contextual<Signature>(std::move(function_name), std::function<Signature>(std::move(outer)),
                               std::move(options));
}

}  // namespace disttune
