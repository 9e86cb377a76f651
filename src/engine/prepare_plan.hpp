// PreparePlan: asks a front end to prepare (compile) a round's candidates chunk by chunk, ahead.
#pragma once

#include <cstddef>
#include <functional>
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
/// candidate is named in `now` at most once per tuning; a failure is remembered.
class PreparePlan {
 public:
  /// `count` candidates; `chunk` (>= 1) candidates of a round per call.
  PreparePlan(PrepareHook hook, std::size_t count, std::size_t chunk = kPrepareChunk);

  /// Empty when `candidate` is ready to run, else why it cannot run. The first time a
  /// candidate is asked for, the hook is called with now = the not yet prepared candidates
  /// of its chunk of tuning.current_round(), ahead = those of the round's later chunks, then
  /// tuning.ahead(). A hook that throws or answers a wrong count fails all of `now`.
  std::string ready(const Tuning& tuning, std::size_t candidate);

 private:
  PrepareHook hook_;
  std::size_t chunk_;
  std::vector<std::optional<std::string>> outcome_;  ///< per candidate; nullopt: not prepared
};

}  // namespace disttune::detail
