// Rank agreement: the digest check and the vote on a stored choice, before any tuning.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "disttune/communicator.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/measurement.hpp"
#include "disttune/timer.hpp"

namespace disttune::detail {

/// Makes the CollectiveContext of each engine collective of one tuning, with its deadline.
struct ContextMaker {
  std::string function;
  std::string key;
  std::chrono::milliseconds timeout;
  CollectiveContext operator()(std::string phase, std::optional<std::size_t> candidate) const;
};

/// All-gathers (function digest, key, candidate list, measurement, timer.flushes_l2(),
/// whether the tuning is split across ranks) and throws RankDisagreement on every rank,
/// naming the ranks and what differs, if any rank differs.
void check_ranks_agree(Communicator& comm, const ContextMaker& context,
                       const FunctionIdentity& identity, const std::string& key,
                       const std::vector<std::string>& candidates, const Measurement& measurement,
                       const Timer& timer, bool split_across_ranks);

/// The stored choice every rank will use: this rank's `stored` if every rank has the same
/// one, else nullopt (all ranks tune). One collective.
std::optional<std::size_t> vote_on_stored_choice(Communicator& comm, const ContextMaker& context,
                                                 std::optional<std::size_t> stored);

}  // namespace disttune::detail
