// Every environment variable disttune reads: declared, parsed and validated here, once.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "disttune/deadline.hpp"
#include "disttune/error.hpp"

namespace disttune {

/// One environment variable disttune reads: its name, the values it accepts and what
/// applies when it is unset or empty.
struct EnvironmentSetting {
  std::string_view name;
  std::string_view accepts;
  std::string_view when_unset;
};

/// Every variable disttune reads (the README's table lists the same).
std::span<const EnvironmentSetting> environment_settings();

/// Reads every variable of this layer whose value can be refused (all but the cache
/// directory and the strategy name, checked where the strategy is made), throwing the first
/// InvalidSetting: a bad value is refused whether or not the other settings make it matter
/// (e.g. ALWAYS_TUNE with the disk cache off). Tuners call it when made and on each miss. The
/// store URLs and the variables a kind of store reads itself (its folder of src/store/ gives
/// them a meaning) are checked with the chain: check_store_environment(), store_chain.hpp.
void check_environment();

/// The text of the variable `name`, one of environment_settings(), for the layer that gives
/// it a meaning (a kind of store reads its own variables so); nullopt when unset or empty.
/// Throws std::logic_error for a name that is none of them: every variable is declared in
/// the one table.
std::optional<std::string> setting_text(std::string_view name);

/// A variable named like disttune's (TRITON_DIST_AUTOTUNE_*) that is none of them, and the
/// known name closest to it (fewest edits).
struct UnknownSetting {
  std::string name;
  std::string closest;
};

/// Every TRITON_DIST_AUTOTUNE_* variable of the environment that disttune does not read, in
/// the environment's order (its value is not looked at: set or empty alike).
std::vector<UnknownSetting> unknown_settings();

/// Each function below reads its variable when called (so a test or launcher may set it
/// at any time); unset and empty mean the same. A value it does not accept throws
/// InvalidSetting naming the variable, the value and what is accepted, in C++ and Python.

/// TRITON_DIST_AUTOTUNE_CACHE_DIR as an absolute path (the disk store root); nullopt when
/// unset, which means kDefaultCacheRoot.
std::optional<std::filesystem::path> cache_dir_setting();

/// The disk store root when TRITON_DIST_AUTOTUNE_CACHE_DIR is unset ("~": the user's home).
inline constexpr std::string_view kDefaultCacheRoot = "~/.triton_dist/autotune";

/// The disk store root: cache_dir_setting() when set, else kDefaultCacheRoot under the
/// user's home ($HOME, else the password database's entry). Throws std::runtime_error when
/// there is neither.
std::filesystem::path cache_root_setting();

/// TRITON_DIST_AUTOTUNE_CACHE_KEEP: replaced records and tunings' logs kept per key, a whole
/// number from 0 to kMostKeptPerKey; unset: kDefaultKeptPerKey.
std::size_t cache_keep_setting();
inline constexpr std::size_t kDefaultKeptPerKey = 3;
inline constexpr std::size_t kMostKeptPerKey = 10000;

/// TRITON_DIST_AUTOTUNE_ALWAYS_TUNE: ignore stored results and tune. A switch: 1, true, yes,
/// on or 0, false, no, off (any case); unset: off.
bool always_tune_setting();

/// TRITON_DIST_AUTOTUNE_VERSION_CHECK: a record whose software dependencies differ is a
/// miss (re-tune) instead of a warning. A switch as above; unset: off.
bool version_check_setting();

/// What importing a table (disttune import, disttune.load_table) does with a record made
/// with other software than the importing program's.
enum class TableMismatch {
  warn,    ///< import it, with one warning naming the difference
  retune,  ///< leave it out, so its key is tuned here
};

/// TRITON_DIST_AUTOTUNE_TABLE_MISMATCH: warn or retune (any case); unset: warn.
TableMismatch table_mismatch_setting();

/// TRITON_DIST_AUTOTUNE_TRITON_DROPIN: `import disttune` makes triton.autotune the drop-in
/// disttune.triton.autotune for the whole process (docs/triton-dropin.md). A switch as
/// above; unset: off.
bool triton_dropin_setting();

/// TRITON_DIST_AUTOTUNE_WARM_START: on a miss, start from the records of the function's
/// nearest other keys (docs/many-shapes.md). A switch as above; unset: on.
bool warm_start_setting();

/// TRITON_DIST_AUTOTUNE_SEARCH_FROM: the number of configs from which the Triton drop-in
/// tunes a key with the search strategy (converge below it), when
/// TRITON_DIST_AUTOTUNE_STRATEGY names none; a whole number from 2 to kMostSearchFrom;
/// unset: kDefaultSearchFrom (docs/triton-dropin.md).
std::size_t search_from_setting();
inline constexpr std::size_t kDefaultSearchFrom = 80;
inline constexpr std::size_t kMostSearchFrom = 1000000;

/// TRITON_DIST_AUTOTUNE_SEARCH_EFFORT: the `effort` of the search strategy when the Triton
/// drop-in tunes with it: quick, default or thorough (the search's levels, search_strategy.cpp;
/// any case); nullopt when unset (the search's own default, no option given; docs/triton-dropin.md).
std::optional<std::string> search_effort_setting();

/// TRITON_DIST_AUTOTUNE_TIMELINE: a file the Triton drop-in appends each tuning's timeline to
/// (one JSON line: compiles, waits, measurement); nullopt when unset.
std::optional<std::filesystem::path> timeline_setting();

/// TRITON_DIST_AUTOTUNE_COMPILE_THREADS: the threads of the process's one compile pool, which
/// the Triton drop-in and contextual tuning queue their compiles on; a whole number from 1 to
/// kMostCompileThreads; unset: the CPU cores, at most kDefaultMostCompileThreads
/// (docs/triton-dropin.md).
std::size_t compile_threads_setting();
inline constexpr std::size_t kDefaultMostCompileThreads = 32;
inline constexpr std::size_t kMostCompileThreads = 256;

/// TRITON_DIST_AUTOTUNE_TIMEOUT: the deadline of each engine collective, in seconds (at
/// least 0.001), or `inf` / `none` for no deadline (kNoDeadline); unset: 600 s.
std::chrono::milliseconds collective_timeout_setting();

/// TRITON_DIST_AUTOTUNE_STRATEGY: the strategy of tunings that name none; nullopt when
/// unset (then kDefaultStrategy in C++, kSpecStrategy from Python). The name is checked
/// where the strategy is made.
std::optional<std::string> strategy_setting();

/// TRITON_DIST_AUTOTUNE_STORES: the chain of stores as URLs separated by commas, first read
/// first; nullopt when unset (the older settings' chain, store_chain.hpp). The URLs are
/// checked where the chain is made.
std::optional<std::string> stores_setting();

/// The strategy of a C++ tuning that names none when TRITON_DIST_AUTOTUNE_STRATEGY is unset:
/// converge (docs/strategies.md).
inline constexpr std::string_view kDefaultStrategy = "converge";

/// The spec's strategy (5 warm-up and 10 timed runs of every candidate): what the Python
/// decorator takes when it names none and TRITON_DIST_AUTOTUNE_STRATEGY is unset.
inline constexpr std::string_view kSpecStrategy = "exhaustive";

/// The collective deadline when neither the option nor the variable sets one: 10 minutes.
inline constexpr std::chrono::milliseconds kDefaultCollectiveTimeout = std::chrono::minutes(10);

}  // namespace disttune
