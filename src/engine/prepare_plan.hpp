// PreparePlan: asks a front end to prepare (compile) a round's candidates chunk by chunk, ahead.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "disttune/tuning.hpp"

namespace disttune::detail {

/// TuningRequest::prepare: readies `now` (one reason per entry, empty = ready), may start `ahead`.
using PrepareHook = std::function<std::vector<std::string>(std::span<const std::size_t> now,
                                                           std::span<const std::size_t> ahead)>;

/// Candidates per prepare call. A round is cut into chunks of its distinct candidates, in
/// order, so every rank asks for the same candidates whatever its compiles finished; one
/// candidate per chunk: the runs start as soon as the next candidate in order is ready, and
/// never wait for a slower one of its chunk.
inline constexpr std::size_t kPrepareChunk = 1;

/// Which candidates of a tuning are prepared, and the calls that prepare them. Each
/// candidate is named in `now` at most once per tuning, and in `ahead` at most once and
/// only before it is named in `now`: what the hook was told once it still knows, so a
/// tuning's calls name at most every candidate twice in all, and the plan's own work is
/// linear in the rounds' lengths and the strategy's ahead() lists (issue 38). A failure is
/// remembered.
class PreparePlan {
 public:
  /// `count` candidates; `chunk` (>= 1) candidates of a round per call.
  PreparePlan(PrepareHook hook, std::size_t count, std::size_t chunk = kPrepareChunk);

  /// Empty when `candidate` is ready to run, else why it cannot run. The first time a
  /// candidate is asked for, the hook is called with now = the not yet prepared candidates
  /// of its chunk of tuning.current_round(), ahead = those of the round's later chunks, then
  /// tuning.ahead(), each left out if it was named to the hook before. A hook that throws
  /// or answers a wrong count fails all of `now`.
  std::string ready(const Tuning& tuning, std::size_t candidate);
  /// Names every candidate of tuning.current_round() not named before, then tuning.ahead(),
  /// to the hook as `ahead` with nothing `now`, so they start preparing and nothing waits
  /// (for a round that may leave unprepared candidates out, Round::leave_unprepared). If the
  /// hook throws, they count as never named.
  void start_round(const Tuning& tuning);
  /// Candidates named to the hook so far, in `now` or `ahead`: what it was asked to prepare.
  std::size_t named_count() const;
  /// Whether `candidate` was named to the hook, in `now` or `ahead`.
  bool named(std::size_t candidate) const;
  /// Whether ready() answered for `candidate`: it is ready, or known not to run.
  bool settled(std::size_t candidate) const;

 private:
  static constexpr std::size_t kNowhere = std::numeric_limits<std::size_t>::max();

  /// Indexes tuning.current_round() once per round: its distinct candidates in order, the
  /// place of each, and the strategy's ahead() for it (which changes only between rounds).
  void learn_round(const Tuning& tuning);
  /// Appends `c` to `ahead` unless it was named to the hook before (or is no candidate).
  void name_ahead(std::size_t c, std::vector<std::size_t>& ahead);
  /// The round's candidates from place `rest` on not offered before, then the strategy's
  /// ahead() the first time in the round, each unless named before.
  std::vector<std::size_t> round_ahead(std::size_t rest);

  PrepareHook hook_;
  std::size_t chunk_;
  std::vector<std::optional<std::string>> outcome_;  ///< per candidate; nullopt: not prepared
  std::vector<bool> named_;                          ///< per candidate: named to the hook before
  std::size_t round_ = kNowhere;                     ///< tuning.rounds_started() of the index below
  std::vector<std::size_t> order_;                   ///< the round's distinct candidates, in order
  std::vector<std::size_t> place_;                   ///< per candidate: its place in order_, or kNowhere
  std::vector<std::size_t> strategy_ahead_;          ///< tuning.ahead() during the round
  std::size_t unscanned_ = 0;  ///< order_[unscanned_..] not yet offered as ahead this round
  bool strategy_ahead_offered_ = false;
};

}  // namespace disttune::detail
