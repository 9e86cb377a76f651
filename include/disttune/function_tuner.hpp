// FunctionTuner: the engine behind a tuned function; tunes one key across ranks, with stores.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "disttune/communicator.hpp"
#include "disttune/error.hpp"
#include "disttune/identity.hpp"
#include "disttune/measurement.hpp"
#include "disttune/report.hpp"
#include "disttune/timer.hpp"
#include "disttune/tuning.hpp"
#include "disttune/warm_start.hpp"

namespace disttune {

/// Settings of a tuned function, fixed when it is made.
struct TunerOptions {
  Measurement measurement;
  std::shared_ptr<Timer> timer;                ///< default: CpuTimer
  std::shared_ptr<Communicator> communicator;  ///< default: SingleProcessCommunicator
  /// Deadline of each engine collective; default: default_collective_timeout().
  std::optional<std::chrono::milliseconds> collective_timeout;
  /// The stores, first read first, as URLs (store_chain.hpp): "file:///path" or a path for a
  /// directory, "redis://host:port/db" for Redis, or a registered scheme's. A record found
  /// further down the chain is copied into the stores before it. Default: the older settings
  /// below when either is given, else TRITON_DIST_AUTOTUNE_STORES, else the older settings
  /// from the environment (store_chain_urls()). Given with either of them: InvalidSetting.
  std::optional<std::vector<std::string>> stores;
  /// The older spelling of a chain of two, first the directory store at this root (default:
  /// default_cache_root())...
  std::optional<std::filesystem::path> cache_root;
  /// ...then the store every node shares, by URL (default: TRITON_DIST_AUTOTUNE_REDIS_URL's;
  /// empty: none).
  std::optional<std::string> shared_store;
  /// false: results stay in memory (no store at all, whatever the settings above say).
  bool disk_cache = true;
  /// Rank-split tuning, for launchers whose runs do not communicate: with several ranks,
  /// each rank measures only its share of the candidates (split_share()), with no
  /// collective per candidate; their results (time, noise, failure and reason) are
  /// all-gathered once, within the collective deadline, and every rank takes the same,
  /// globally best candidate. The record says so (Record::split_ranks). Off by default:
  /// every rank measures every candidate and times are MAX-reduced (the spec's).
  bool split_across_ranks = false;
  /// Warm start (TRITON_DIST_AUTOTUNE_WARM_START, on by default): the distance between keys
  /// that picks the nearest stored keys; empty: default_key_distance (warm_start.hpp).
  KeyDistance key_distance;
};

/// The candidates (indices into a list of `count`) that rank `rank` of `ranks` measures in a
/// rank-split tuning: those with index % ranks == rank, ascending.
std::vector<std::size_t> split_share(std::size_t count, int rank, int ranks);

/// Per-call switches (the spec's call flags).
struct CallOptions {
  bool autotune = true;   ///< false: run the first config; no tuning, no cache
  bool verbose = false;   ///< send the table of candidates and the choice to the sink (stderr)
  /// Ranks to agree with for this call; default: the tuner's communicator.
  Communicator* communicator = nullptr;
};

/// What the engine needs to tune one key.
struct TuningRequest {
  std::string key;                      ///< canonical key text
  std::vector<std::string> candidates;  ///< canonical JSON of the pruned configs, in order
  std::function<void(std::size_t)> run; ///< runs candidate i once (may throw: it then fails)
  bool verbose = false;
  Communicator* communicator = nullptr; ///< default: the tuner's
  /// Asked after the runs: true (e.g. after Ctrl-C) leaves no record in any store.
  std::function<bool()> cancelled;
  /// Readies candidates before their runs (e.g. compiles them); optional. Before a round the
  /// engine calls prepare(now, ahead): every candidate in `now` is ready when it returns, or its
  /// entry in the returned list (one per `now` entry; empty text = ready) says why it cannot run,
  /// which fails it like a failed run. `ahead` are candidates likely needed soon, which the
  /// front end may start preparing in the background; each is named there at most once per
  /// tuning, before it is named in `now`. Candidates never named are never prepared.
  std::function<std::vector<std::string>(std::span<const std::size_t> now,
                                         std::span<const std::size_t> ahead)> prepare;
  /// Canonical JSON of the configs the prune function removed for this key, in order: named
  /// in the report and the record, never run.
  std::vector<std::string> pruned;
  /// Whether candidate i is prepared now, answered without waiting (optional, beside
  /// `prepare`): nullopt while its preparation is queued or running, or was never asked for;
  /// else the seconds it took (0: not known). The engine tells the strategy at each round's
  /// end, agreed across ranks (CandidateStanding::prepared, prepare_s), so that a search
  /// takes prepared candidates first and learns compile costs; without it every candidate
  /// stands prepared. With `prepare`, it is asked only of candidates named there, and never
  /// again of one once it told that one's seconds (a preparation that ended stays ended).
  std::function<std::optional<double>(std::size_t)> prepared;
  /// How many candidates `prepare` readies at once (its compile pool's threads, at least 1):
  /// a search measures at most that many in its first round and names no more compiles ahead
  /// than the threads its round leaves free (docs/strategies.md).
  std::size_t compile_threads = kDefaultCompileThreads;
};

/// The non-template engine of a tuned function: disk lookup, rank agreement, measurement,
/// selection, record and log. Thread-safe; one tuning runs at a time per FunctionTuner.
class FunctionTuner {
 public:
  FunctionTuner(FunctionIdentity identity, TunerOptions options);
  ~FunctionTuner();
  FunctionTuner(const FunctionTuner&) = delete;
  FunctionTuner& operator=(const FunctionTuner&) = delete;

  /// The best candidate's index for request.key, from the disk store or by tuning. Throws
  /// TuningFailed (a std::runtime_error) if every candidate failed (listing why) or the list
  /// is empty, InvalidSetting for a bad environment variable,
  /// RankDisagreement or CollectiveTimeout in multi-rank runs.
  TuningReport resolve(const TuningRequest& request);

  /// What the stores know of this function on this device: the valid records of its keys
  /// (same function digest and hardware digest, read through the stores in order, the
  /// directory's first), at most `most`; none without stores (disk_cache off). Never throws
  /// for what the stores hold (a bad record, a store out of reach: left out, warned).
  std::vector<Record> stored_records(std::size_t most) const;
  /// The root of the first directory store of this function's stores; nullopt when there is
  /// none (disk_cache off, or a chain without a directory).
  std::optional<std::filesystem::path> directory_root() const;

  const FunctionIdentity& identity() const;
  const TunerOptions& options() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace disttune
