// The Strategy seam: which candidates get more samples in each round. Sees numbers only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "disttune/measurement.hpp"
#include "disttune/strategy_option.hpp"

namespace disttune {

/// What a strategy knows of one candidate after a round: its agreed (rank-reduced) time,
/// or that it failed, and how many samples it has.
struct CandidateStanding {
  bool failed = false;
  double time_ms = 0.0;  ///< agreed statistic; meaningless when failed
  double noise = 0.0;    ///< agreed relative spread of the samples
  int samples = 0;       ///< this candidate's samples so far (the same on every rank)
  /// The same three numbers over the samples of the last round only (0 if it took none).
  /// After an interleaved round (A B A B ...) the samples are paired ratios, each run over
  /// the mean of its pass (dimensionless, about 1): what the near-tie decision compares.
  double round_time_ms = 0.0;
  double round_noise = 0.0;
  int round_samples = 0;
  bool baseline = false;  ///< the space entry to keep unless another is faster beyond noise
  /// Whether its preparation (e.g. its compile) had ended on every rank when the round
  /// ended, so that a run of it in the next round would not wait; a front end that cannot
  /// tell reports every candidate prepared.
  bool prepared = true;
  /// Seconds its preparation took (the longest over the ranks); 0 when not known or not
  /// prepared. A strategy may learn compile costs from it.
  double prepare_s = 0.0;
  /// Listed in the last round but left out of it unprepared (Round::leave_unprepared):
  /// it made no runs there, and a later round may list it again.
  bool left_out = false;
};

/// A round that need not wait for every preparation (compile): its candidates run in list
/// order, each once it is prepared on every rank; once `after` of them are prepared (or
/// ran), the driver waits until the time since the round began (or, `from_first_prepared`,
/// since its first candidate was prepared) has grown by `patience` times what it was then,
/// or by `patience_s` seconds if that is longer, and then leaves out
/// those still not prepared on every rank (they make no runs in it; the next standings mark
/// them left_out). The ranks agree on what is prepared and on whether their patience ran out
/// (a MAX all-reduce each time the next candidate is not known prepared), so every rank
/// runs and leaves out the same ones. Nothing left out: the runs are those of a round
/// without it.
struct LeaveUnprepared {
  std::size_t after = 0;
  double patience = 0.0;
  double patience_s = 0.0;
  /// Time the patience from when the round's first candidate was prepared on every rank
  /// rather than from the round's start: a wait every compile of the round shared (a
  /// compiler's one-time set-up in a fresh process) does not lengthen it.
  bool from_first_prepared = false;
};

/// One round of measurement: these candidates, in list order, each with this many warm-up
/// and timed runs. A candidate may appear several times: A B A B ... interleaves their runs.
/// A round without timed runs ends measurement: its candidates are the finalists, among
/// which the best is chosen. A round naming an index out of range, with negative counts, or
/// whose candidates are neither ascending nor passes of one ascending list (A B A B ...), is
/// refused (std::logic_error naming the strategy).
struct Round {
  Round() = default;
  /// A round of runs (or, without timed runs, the finalists), as Round{candidates, w, t}.
  Round(std::vector<std::size_t> list, int warmups, int timed)
      : candidates(std::move(list)), warmup_runs(warmups), timed_runs(timed) {}
  /// Every one of `count` candidates, in order (a first round over the whole space, or, with
  /// no timed runs, all of them as finalists).
  static Round every(std::size_t count, int warmups, int timed) {
    Round round({}, warmups, timed);
    round.candidates.reserve(count);
    for (std::size_t i = 0; i < count; ++i) round.candidates.push_back(i);
    return round;
  }

  std::vector<std::size_t> candidates;  ///< indices into the tuning's candidate list
  int warmup_runs = 0;
  int timed_runs = 0;
  /// End round only: the strategy's choice among the finalists; nullopt: the lowest agreed
  /// time, or the baseline if that is within noise of it.
  std::optional<std::size_t> chosen;
  /// End round only, with `chosen`: the finalists the measurement could not tell apart from it.
  std::vector<std::size_t> within_noise;
  /// Set: the round need not wait for every compile (below). nullopt (the default), an
  /// interleaved round, or a driver that cannot tell what is prepared: every candidate runs,
  /// in list order, each once it is prepared.
  std::optional<LeaveUnprepared> leave_unprepared;
};

/// The compile threads a front end is taken to prepare candidates on when it does not say
/// (Python's `precompile_threads` default).
inline constexpr std::size_t kDefaultCompileThreads = 16;

/// What a strategy may know of the space before its first round.
struct SpaceInfo {
  std::vector<std::string> candidates;  ///< canonical JSON of each candidate, in order
  /// Warm start: candidates ranked best-first from the records of neighbouring keys; may be empty.
  std::vector<std::size_t> prior;
  std::uint64_t seed = 0;  ///< the same on every rank
  /// How many candidates the front end prepares (compiles) at once: its compile pool's
  /// threads (TuningRequest::compile_threads); at least 1.
  std::size_t compile_threads = kDefaultCompileThreads;
};

/// Decides rounds from agreed numbers only, so every rank takes the same decisions. It never
/// sees devices or ranks; register one by name (register_strategy) to make it selectable.
class Strategy {
 public:
  virtual ~Strategy() = default;
  /// Called once before first_round() with the space; the default ignores it.
  virtual void begin(const SpaceInfo& space) { (void)space; }
  /// Candidates a front end may prepare (compile) ahead of the next round, most likely first;
  /// the default: none.
  virtual std::vector<std::size_t> ahead() const { return {}; }
  /// The first round over `count` candidates.
  virtual Round first_round(std::size_t count) = 0;
  /// The next round given every candidate's standing; one without timed runs ends
  /// measurement and names the finalists.
  virtual Round next_round(const std::vector<CandidateStanding>& standings) = 0;
};

/// The spec's method: one round, every candidate, warm-up and timed runs as in `measurement`.
std::unique_ptr<Strategy> make_exhaustive_strategy(const Measurement& measurement);

/// Rounds that drop candidates clearly slower than the best (beyond the measured noise):
/// every candidate gets a few samples first; survivors get more, up to a cap; the last
/// survivors are compared by their statistic, ties to the lowest index.
std::unique_ptr<Strategy> make_adaptive_strategy(const Measurement& measurement);

/// A race: one warm-up and one timed run of every candidate screen out the obvious losers;
/// then, per candidate, samples until the relative standard error of its statistic is under
/// max_noise after min_time_ms of device time, or until its confidence interval shows it
/// cannot beat the leader; within budget_ms in total; then candidates still within noise
/// of the leader run interleaved (A B A B ...) and are compared on those runs
/// (docs/strategies.md). Its strategy_options: max_noise (0, 1), default 0.005;
/// min_time_ms >= 0, default 0.5; budget_ms >= 0, default 0 (none); seed. InvalidSetting
/// naming the option for any other name or a value out of range.
std::unique_ptr<Strategy> make_converge_strategy(const Measurement& measurement);

/// A search for large spaces: measures a budgeted fraction of the candidates, chosen from
/// what is measured so far by a model over the candidates' own parameters (numbers and
/// categories of their canonical JSON; failures are observations), then races a shortlist
/// with the converge strategy. Deterministic given its seed and the agreed numbers. Its
/// strategy_options: effort, fraction, budget_s, batch, shortlist, seed, and converge's
/// max_noise and min_time_ms, handed to its race (docs/strategies.md).
std::unique_ptr<Strategy> make_search_strategy(const Measurement& measurement);

/// The baseline a search must beat: the same budget and options as "search", candidates
/// drawn uniformly at random (seeded), the same shortlist race.
std::unique_ptr<Strategy> make_random_strategy(const Measurement& measurement);

/// measurement.strategy_options["seed"] (default 0): the seed every strategy's begin() gets.
/// Throws InvalidSetting unless it is an unsigned decimal integer.
std::uint64_t strategy_seed(const Measurement& measurement);

/// Throws InvalidSetting naming `strategy` and the name unless every key of
/// measurement.strategy_options is "seed" or one of `declared` (for a strategy registered
/// without declaring its options; one that declares them is checked by the registry).
void check_strategy_options(const Measurement& measurement, const std::string& strategy,
                            const std::vector<std::string>& declared);

/// Warm start (docs/many-shapes.md): with a prior (SpaceInfo::prior), a probe round measures
/// the prior's first kWarmStartTop candidates, the config-space neighbours of its first (one
/// level in one parameter) and a deterministic sample of kWarmStartSample others (1 warm-up,
/// kWarmStartProbeRuns timed runs each); ahead() names them, then, up to
/// SpaceInfo::compile_threads in all, the unmeasured neighbours of the prior's 2nd and 3rd.
/// At most kWarmStartClimbs climb rounds then measure the unmeasured neighbours of the kWarmStartCentres fastest so far, while a
/// round moves the fastest. A fresh strategy of the configured name then races the
/// kWarmStartRace fastest measured (those within noise of the fastest, at least two); the rest
/// are never run. If every probed candidate fails, the configured strategy runs over the whole
/// space. Without a prior, or over a space of at most kWarmStartTop + kWarmStartSample
/// candidates, it is the configured strategy alone. Tuning wraps its strategy in it, given a prior.
std::unique_ptr<Strategy> make_warm_start_strategy(const Measurement& measurement);
inline constexpr std::size_t kWarmStartTop = 4;
inline constexpr std::size_t kWarmStartSample = 4;
inline constexpr int kWarmStartProbeRuns = 3;
inline constexpr std::size_t kWarmStartClimbs = 5;
inline constexpr std::size_t kWarmStartCentres = 3;
inline constexpr std::size_t kWarmStartRace = 8;

/// measurement.strategy, or when it is empty TRITON_DIST_AUTOTUNE_STRATEGY (strategy_setting();
/// an unknown name there throws InvalidSetting naming the variable), or kDefaultStrategy
/// ("converge").
std::string strategy_name(const Measurement& measurement);

/// Makes one tuning's strategy from its measurement settings.
using StrategyFactory = std::function<std::unique_ptr<Strategy>(const Measurement& measurement)>;

/// Makes `name` selectable (Measurement::strategy, TRITON_DIST_AUTOTUNE_STRATEGY) for every
/// later tuning in this process. "exhaustive", "adaptive", "converge", "search" and
/// "random" are registered from the start. This form declares no options: the factory gets
/// measurement.strategy_options as given, checks them itself (check_strategy_options), and
/// the ranks compare them as given texts.
/// Throws std::invalid_argument for an empty name, a name already registered, or no factory.
/// Every rank must register the same strategies (the ranks compare the name before tuning).
/// Thread-safe.
void register_strategy(const std::string& name, StrategyFactory factory);

/// The same, for a strategy that declares its options (every built-in one does; list
/// StrategyOption::seed() to take the seed): any other name, or a value an option does not
/// accept, is InvalidSetting when the strategy is made, and the factory's
/// measurement.strategy_options are as read_declared_options reads them (every option given
/// or defaulted, one canonical text each, which std::stod reads, or std::stoll, or std::stoull for the seed). Throws
/// std::invalid_argument, besides the above, for two options of one name or a default its
/// option does not accept.
void register_strategy(const std::string& name, std::vector<StrategyOption> options,
                       StrategyFactory factory);

/// The registered names, built-in ones first, then in registration order.
std::vector<std::string> registered_strategies();

/// A new strategy of the registered name strategy_name(measurement); throws InvalidSetting
/// (a std::invalid_argument) for an unknown name, listing the registered ones, or for
/// options the strategy does not declare or accept (register_strategy with options).
std::unique_ptr<Strategy> make_strategy(const Measurement& measurement);

}  // namespace disttune
