// The C++ function-level API: a launcher tuned over a config space, per key, remembered.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "disttune/config.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/hit_cache.hpp"
#include "disttune/isolation.hpp"
#include "disttune/key_hash.hpp"
#include "disttune/output_check.hpp"

/// The identity of a function defined in this source file: its name plus the SHA-256 of
/// the file, which CMake's disttune_source_digest(<target>) provides at build time.
#ifdef DISTTUNE_SOURCE_DIGEST
#define DISTTUNE_FUNCTION(name) (::disttune::FunctionIdentity{(name), DISTTUNE_SOURCE_DIGEST})
#else
#define DISTTUNE_FUNCTION(name)                                                           \
  static_assert(false, "DISTTUNE_FUNCTION needs disttune_source_digest(<target>) in CMake, " \
                       "or give FunctionIdentity{name, version} explicitly")
#endif

namespace disttune {

/// `KeyOf` and `Launch` void (the default): the key function and the launcher are the Spec's
/// std::function members. Otherwise they are these types, given to the constructor, and a
/// cache hit calls them directly (inlined where the compiler can): see the class.
template <class Config, class Key, class Signature, class KeyOf = void, class Launch = void>
class Autotuned;

/// What a tuned function is made of. `Config` needs `Value describe(const Config&)`
/// (found by argument-dependent lookup); `Key` must be hashable by KeyHash, comparable
/// with ==, and describable.
template <class Config, class Key, class Result, class... Args>
struct AutotuneSpec {
  FunctionIdentity identity;
  std::vector<Config> configs;                                ///< the config space, in order
  std::function<Key(const Args&...)> key;                     ///< the business key of a call
  std::function<bool(const Config&, const Args&...)> prune;   ///< keep a config? (optional)
  std::function<Result(const Config&, Args...)> launch;       ///< runs the work with a config
  TunerOptions options;
  /// Optional: each candidate's result is checked once against a reference before it is timed.
  OutputCheck<Result, Args...> check;
  /// Optional (triton.autotune's restore_value / reset_to_zero): saves what the launcher
  /// changes in place and returns the function that puts it back. Called once per tuning;
  /// the restore runs before every tuning run and before the final run.
  std::function<std::function<void()>(Args...)> save_inputs;
  /// Optional: run and time the candidates in a fork()ed worker process (CPU launchers; see
  /// isolation.hpp). A crash or a time-out then fails one candidate. Needs options.timer unset.
  std::optional<IsolationOptions> isolation;
};

/// A launcher tuned per key. Calls with a key seen before run the remembered best config;
/// a new key is pruned, looked up on disk, else tuned (every rank agreeing), and the
/// launcher then runs once more with the best config and that result is returned.
/// Thread-safe: concurrent calls with one new key tune once (the key function and the
/// launcher may be called from concurrent calls at once).
///
/// Two spellings, one behaviour. `Autotuned<Config, Key, Result(Args...)>` takes the key
/// function and the launcher as the Spec's std::function members (each hit then makes two
/// indirect calls through them). `Autotuned(std::move(spec), key, launch)` (deduced) or
/// `Autotuned<Config, Key, Result(Args...), KeyOf, Launch>` keeps the key function's and
/// the launcher's own types (lambdas, function objects, function pointers), so a hit calls
/// them directly; the Spec's key and launch are then left empty.
template <class Config, class Key, class Result, class... Args, class KeyOf, class Launch>
class Autotuned<Config, Key, Result(Args...), KeyOf, Launch> {
  static constexpr bool kErased = std::is_void_v<KeyOf>;
  static_assert(kErased == std::is_void_v<Launch>,
                "disttune::Autotuned: give both KeyOf and Launch, or neither (the Spec's std::functions)");

 public:
  using Spec = AutotuneSpec<Config, Key, Result, Args...>;
  /// What computes a call's key: the Spec's std::function, or KeyOf.
  using KeyFunction = std::conditional_t<kErased, std::function<Key(const Args&...)>, KeyOf>;
  /// What runs the work with a config: the Spec's std::function, or Launch.
  using Launcher = std::conditional_t<kErased, std::function<Result(const Config&, Args...)>, Launch>;
  static_assert(std::is_invocable_r_v<Key, KeyFunction&, const Args&...>,
                "disttune::Autotuned: the key function must take (const Args&...) and return the Key");
  static_assert(std::is_invocable_r_v<Result, Launcher&, const Config&, Args&...>,
                "disttune::Autotuned: the launcher must take (const Config&, Args...) and return the Result");

  /// The type-erased spelling: spec.key and spec.launch are required.
  explicit Autotuned(Spec spec)
    requires kErased
      : Autotuned(std::move(spec), KeyFunction{}, Launcher{}, Delegated{}) {}

  /// The direct spelling: `key` and `launch` keep their types; spec.key and spec.launch must
  /// be empty (std::invalid_argument otherwise: given twice).
  Autotuned(Spec spec, KeyFunction key, Launcher launch)
    requires(!kErased)
      : Autotuned(std::move(spec), std::move(key), std::move(launch), Delegated{}) {}

  Result operator()(Args... args) { return hit_or_tune(nullptr, args...); }

  Result call(const CallOptions& flags, Args... args) {
    if (!flags.autotune) return launch_(spec_.configs.front(), args...);
    return hit_or_tune(&flags, args...);
  }

  /// The index into the config space chosen for `key`, if it is cached in this process.
  std::optional<std::size_t> cached_choice(const Key& key) const {
    Entry hit{};
    return cache_.find(key, hit) ? std::optional<std::size_t>(hit.config) : std::nullopt;
  }

  /// The report of the last tuning or disk load, if any.
  std::optional<TuningReport> last_report() const {
    std::lock_guard lock(tuning_mutex_);
    return last_report_;
  }

  /// The Spec as given (with the direct spelling its key and launch are empty).
  const Spec& spec() const { return spec_; }
  /// The launcher every run goes through (the Spec's launch, or the one given).
  const Launcher& launcher() const { return launch_; }

 private:
  struct Delegated {};  ///< tags the constructor both spellings delegate to

  Autotuned(Spec spec, KeyFunction key, Launcher launch, Delegated)
      : spec_(std::move(spec)),
        key_([&]() -> KeyFunction {
          if constexpr (kErased) return spec_.key; else return std::move(key);
        }()),
        launch_([&]() -> Launcher {
          if constexpr (kErased) return spec_.launch; else return std::move(launch);
        }()),
        worker_timer_(spec_.isolation ? std::make_shared<WorkerTimer>() : nullptr),
        engine_(spec_.identity, engine_options(spec_, worker_timer_)) {
    const std::string& name = spec_.identity.name;
    if (spec_.configs.empty()) {
      throw std::invalid_argument("disttune: function '" + name + "' has an empty config space");
    }
    if constexpr (kErased) {
      if (!spec_.key) throw std::invalid_argument("disttune: '" + name + "' has no key function");
      if (!spec_.launch) throw std::invalid_argument("disttune: '" + name + "' has no launcher");
    } else {
      if (spec_.key || spec_.launch) {
        throw std::invalid_argument("disttune: '" + name + "' is given its key function or launcher twice: " +
                                    "leave spec.key and spec.launch empty when passing them to the constructor");
      }
      if constexpr (std::is_pointer_v<KeyFunction>) {
        if (key_ == nullptr) throw std::invalid_argument("disttune: '" + name + "' has no key function");
      }
      if constexpr (std::is_pointer_v<Launcher>) {
        if (launch_ == nullptr) throw std::invalid_argument("disttune: '" + name + "' has no launcher");
      }
    }
    if constexpr (!std::is_void_v<Result>) {
      if (spec_.check.reference_config && *spec_.check.reference_config >= spec_.configs.size()) {
        throw std::invalid_argument("disttune: the reference config of '" + name +
                                    "' is not an index of its config space");
      }
    }
    for (const auto& config : spec_.configs) candidate_json_.push_back(canonical_json(describe(config)));
  }

  /// The hit path: the key, one lookup in the hit cache, the launch; else a miss.
  /// `flags` nullptr: the defaults (CallOptions{}).
  Result hit_or_tune(const CallOptions* flags, Args&... args) {
    Key key = key_(std::as_const(args)...);
    typename HitCache::Miss miss;
    if (Entry hit{}; cache_.find(key, hit, miss)) [[likely]] {
      return launch_(spec_.configs[hit.config], args...);
    }
    return tune_and_run(flags != nullptr ? *flags : CallOptions{}, std::move(key), miss, args...);
  }

  struct Entry {
    std::size_t config;
  };
  using HitCache = detail::HitCache<Key, Entry>;

  /// A miss: `key` was not in the cache where `miss` says. Another thread may have tuned it
  /// since; the cache is searched again only if it changed there.
  Result tune_and_run(const CallOptions& flags, Key key, const typename HitCache::Miss& miss, Args&... args) {
    std::unique_lock lock(tuning_mutex_);
    if (Entry hit{}; !cache_.still_missing(miss) && cache_.find(key, hit)) {
      lock.unlock();
      return launch_(spec_.configs[hit.config], args...);
    }
    std::vector<std::size_t> surviving;
    std::vector<std::string> pruned;
    for (std::size_t i = 0; i < spec_.configs.size(); ++i) {
      if (!spec_.prune || spec_.prune(spec_.configs[i], args...)) {
        surviving.push_back(i);
      } else {
        pruned.push_back(candidate_json_[i]);
      }
    }
    if (surviving.empty()) {
      throw TuningFailed("disttune: prune function of '" + spec_.identity.name +
                         "' removed every config for key " + canonical_json(describe(key)));
    }
    TuningRequest request;
    request.key = canonical_json(describe(key));
    for (std::size_t index : surviving) request.candidates.push_back(candidate_json_[index]);
    request.pruned = std::move(pruned);
    const std::function<void()> restore =
        spec_.save_inputs ? spec_.save_inputs(args...) : std::function<void()>([] {});
    CandidateChecks checks(*this, surviving, args...);
    const auto run = [&](std::size_t candidate) {
      (void)launch_(spec_.configs[surviving[candidate]], args...);
    };
    std::optional<ForkedWorker> worker;
    std::optional<std::size_t> opened;
    if (spec_.isolation) {
      worker.emplace([&](std::size_t c) { return checks.failure(c, restore); }, restore, run,
                     *spec_.isolation);
      request.run = [&](std::size_t candidate) {
        if (opened != candidate) {
          opened = candidate;
          worker->check(candidate);
        }
        const double ms = worker->run(candidate);
        if (worker_timer_->timed()) worker_timer_->add_sample(ms);
      };
    } else {
      request.run = [&](std::size_t candidate) {
        if (std::optional<std::string> failure = checks.failure(candidate, restore)) {
          throw std::runtime_error(*failure);
        }
        restore();
        run(candidate);
      };
    }
    request.verbose = flags.verbose;
    request.communicator = flags.communicator;
    TuningReport report = engine_.resolve(request);
    worker.reset();
    restore();  // the final run sees the caller's inputs
    const std::size_t chosen = surviving[report.best];
    cache_.insert(key, Entry{chosen});
    last_report_ = std::move(report);
    lock.unlock();
    return launch_(spec_.configs[chosen], args...);
  }

  /// One tuning's output checks: the reference computed once (on restored inputs), and each
  /// candidate's result compared with it once.
  class CandidateChecks {
   public:
    CandidateChecks(Autotuned& tuned, const std::vector<std::size_t>& surviving, Args&... args)
        : tuned_(tuned), surviving_(surviving), args_(args...) {}

    /// Why candidate `c` fails its check (nullopt if it passes or was checked before).
    std::optional<std::string> failure(std::size_t c, const std::function<void()>& restore) {
      if constexpr (std::is_void_v<Result>) {
        return std::nullopt;
      } else {
        const OutputCheck<Result, Args...>& check = tuned_.spec_.check;
        if (!check.enabled() || (checked_.size() > c && checked_[c])) return std::nullopt;
        const Spec& spec = tuned_.spec_;
        return std::apply(
            [&](auto&... args) -> std::optional<std::string> {
              if (!expected_) {
                restore();
                try {
                  expected_.emplace(check.reference
                                        ? check.reference(args...)
                                        : tuned_.launch_(spec.configs[*check.reference_config], args...));
                } catch (const std::exception& error) {
                  return std::string("disttune: the reference failed: ") + error.what();
                }
              }
              restore();
              const Result result = tuned_.launch_(spec.configs[surviving_[c]], args...);
              if (checked_.size() <= c) checked_.resize(c + 1, false);
              checked_[c] = true;
              std::optional<std::string> where;
              if (check.equal) {
                if (!check.equal(result, *expected_)) where = "OutputCheck::equal returned false";
              } else {
                where = detail::difference(result, *expected_);
              }
              if (!where) return std::nullopt;
              return "disttune: the result differs from the reference: " + *where;
            },
            args_);
      }
    }

   private:
    using Stored = std::conditional_t<std::is_void_v<Result>, int, Result>;
    Autotuned& tuned_;
    const std::vector<std::size_t>& surviving_;
    std::tuple<Args&...> args_;
    std::optional<Stored> expected_;
    std::vector<bool> checked_;
  };

  static TunerOptions engine_options(const Spec& spec, const std::shared_ptr<WorkerTimer>& timer) {
    TunerOptions options = spec.options;
    if (timer) {
      if (options.timer) {
        throw std::invalid_argument("disttune: '" + spec.identity.name +
                                    "' runs isolated: its worker times the runs, so options.timer "
                                    "must be unset");
      }
      options.timer = timer;
    }
    return options;
  }

  Spec spec_;
  KeyFunction key_;
  Launcher launch_;
  std::shared_ptr<WorkerTimer> worker_timer_;  ///< the engine's timer when isolated
  FunctionTuner engine_;
  std::vector<std::string> candidate_json_;
  HitCache cache_;  ///< written under tuning_mutex_
  mutable std::mutex tuning_mutex_;
  std::optional<TuningReport> last_report_;
};

/// `Autotuned tuned(std::move(spec))`: the type-erased spelling, its types deduced.
template <class Config, class Key, class Result, class... Args>
Autotuned(AutotuneSpec<Config, Key, Result, Args...>) -> Autotuned<Config, Key, Result(Args...)>;

/// `Autotuned tuned(std::move(spec), key, launch)`: the direct spelling, key and launch
/// keeping their own types.
template <class Config, class Key, class Result, class... Args, class KeyOf, class Launch>
Autotuned(AutotuneSpec<Config, Key, Result, Args...>, KeyOf, Launch)
    -> Autotuned<Config, Key, Result(Args...), KeyOf, Launch>;

}  // namespace disttune
