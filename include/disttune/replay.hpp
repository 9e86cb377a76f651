// Replay (simulation) mode: a table of every candidate's recorded times and failures, and
// strategies run against it on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "disttune/error.hpp"
#include "disttune/measurement.hpp"

namespace disttune {

/// The format name and the one version of it this build reads.
inline constexpr const char* kReplayTableFormat = "disttune.replay_table";
inline constexpr int kReplayTableVersion = 1;

/// A replay table that cannot be read: the message names the file and the problem.
class BadReplayTable : public ErrorAs<std::runtime_error> {
 public:
  using ErrorAs::ErrorAs;
};

/// One candidate as recorded on a device: every sample it took, or why it could not run.
struct ReplayEntry {
  std::string config;              ///< canonical JSON, as the engine sees the candidate
  bool failed = false;             ///< status "failed" (else "ok")
  std::string reason;              ///< why it failed (status "failed" only)
  std::vector<double> samples_ms;  ///< status "ok": at least one, each finite and > 0
  double compile_s = 0.0;          ///< seconds it took to compile; 0 if not recorded
  /// The median of samples_ms: the entry's true time (ok entries only).
  double true_ms() const;
};

/// A whole recorded space (docs/strategies.md, "Replay (simulation) mode", has the format):
/// {"format": "disttune.replay_table", "version": 1, "kernel": "...", "entries": [
///   {"config": {...}, "status": "ok", "samples_ms": [0.41, ...], "compile_s": 2.3},
///   {"config": {...}, "status": "failed", "reason": "...", "compile_s": 0.9}, ...]}
/// plus free-form "problem", "device", "software" and "method" fields kept as JSON text.
struct ReplayTable {
  std::string kernel;
  std::string problem;      ///< the "problem" field as canonical JSON ("{}" if absent): the key it was recorded at
  std::string description;  ///< the problem, device, software and method fields, as JSON text
  std::vector<ReplayEntry> entries;  ///< at least one ok; configs distinct
  /// The lowest true time of an ok entry.
  double best_ms() const;
};

/// Parses a table's JSON text; `origin` (e.g. the file name) starts every error message.
/// Throws BadReplayTable for anything but a valid version-1 table; never crashes on bad input.
ReplayTable parse_replay_table(const std::string& text, const std::string& origin);
/// Reads and parses the table in `path` (BadReplayTable if it cannot be read).
ReplayTable read_replay_table(const std::string& path);

/// The replay's model of a first call's wall clock (docs/strategies.md, "Replay wall
/// clock"): the compile pipeline's threads compiling what the engine names to prepare, each
/// compile lasting its entry's compile_s, and the runs one after another.
struct WallClock {
  int compile_threads = 16;  ///< compiles in flight at once (the pipeline's pool), >= 1
  /// Host time of each run (warm-up or timed) on top of its recorded device time: a Python
  /// launch, its event pair and the engine's step, milliseconds (>= 0).
  double launch_ms = 0.05;
  /// When compile_max_s > 0, a table of slow compiles: each entry's recorded compile_s is
  /// mapped linearly from the table's range onto [compile_min_s, compile_max_s] (their
  /// order kept, so a model of compile costs still sees which configs compile longer).
  double compile_min_s = 0.0;
  double compile_max_s = 0.0;
  /// Seconds of the compiler's one-time set-up in a fresh process (>= 0): every compile
  /// started before then waits for it, and ends that long after the call began plus its own
  /// seconds (on an H100 host the first wave of Triton compiles took 1-1.5 s longer than
  /// the later ones; docs/strategies.md).
  double compile_setup_s = 0.0;
  /// Cores the compiles in flight share (>= 0; 0: none shared, each compile lasts its
  /// recorded seconds whatever runs beside it). With N, n compiles at once each go at
  /// min(1, N / n) of full speed, a compile's work being its recorded seconds times
  /// min(1, N / 16): the tables' compiles were recorded 16 at once (on an H200 host 15 first-
  /// wave compiles took 1.4-2.1 s each where 8 took 0.8-1.3 s; docs/strategies.md).
  int compile_cores = 0;
};

/// One strategy run against a table.
struct ReplayRun {
  std::uint64_t seed = 0;
  std::optional<std::size_t>
      chosen;          ///< the entry the tuning chose; nullopt if every one it measured failed
  double ratio = 0.0;  ///< the chosen entry's true time over the table's best (0 if none chosen)
  std::size_t measured = 0;        ///< distinct entries named in any round
  double measured_fraction = 0.0;  ///< measured over the table's entries
  double device_s = 0.0;           ///< the recorded time of every warm-up and timed run made
  double compile_s = 0.0;          ///< the compile time of the entries measured, as the clock charged it
  int rounds = 0;                  ///< rounds of runs, re-takes included
  double wall_s = 0.0;          ///< the simulated first call: waits on compiles plus runs
  double compile_wait_s = 0.0;  ///< of wall_s, the time the runs waited on a compile
  std::size_t compiled = 0;     ///< entries whose compile started before the call returned
};

/// Runs `measurement`'s strategy against `table` on the CPU: a real Tuning driven by the
/// engine's round driver over a single-process communicator; each run's time is drawn
/// (seeded by `seed`) from its entry's recorded samples; a failed entry fails at its first
/// run with its recorded reason. `seed` is also the strategy's seed (strategy_options).
/// The engine's prepare calls drive a simulated compile pool as `clock` says (wall_s).
/// Throws std::invalid_argument for compile_threads < 1, a negative launch_ms or compile_cores.
ReplayRun replay_tuning(const ReplayTable& table, Measurement measurement, std::uint64_t seed,
                        const WallClock& clock = {});

/// What a replayed sweep's keys pay to compile, all from the first table's compile_s (the
/// tables after the first are usually recorded with binaries already built).
enum class SweepCompiles {
  per_key,  ///< sizes as compile-time constants: every key compiles what it runs
  shared,   ///< sizes as run-time arguments: what one key compiled, the next ones have
};

/// One key of a replayed sweep.
struct SweepKeyRun {
  std::string key;                     ///< its table's problem
  ReplayRun run;                       ///< its tuning against its table
  std::vector<std::string> from_keys;  ///< the keys whose records warm-started it; empty: none
};

/// Replays a sweep (docs/strategies.md, "Replaying a sweep"): `tables`, one per key (its
/// problem; distinct) over one space (the same configs in the same order, else
/// std::invalid_argument), are tuned in order as replay_tuning does; with `warm_start` each
/// key starts, as the engine's does, from the records of the keys before it (their nearest
/// by the default key distance). The wall clock charges compiles as `compiles` says.
std::vector<SweepKeyRun> replay_sweep(const std::vector<ReplayTable>& tables, Measurement measurement,
                                      std::uint64_t seed, const WallClock& clock, SweepCompiles compiles,
                                      bool warm_start);

}  // namespace disttune
