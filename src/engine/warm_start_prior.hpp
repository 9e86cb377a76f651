// The prior of a warm start: the candidates that the nearest keys' records ranked best.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/rank_agreement.hpp"
#include "disttune/communicator.hpp"
#include "disttune/store.hpp"
#include "disttune/warm_start.hpp"

namespace disttune::detail {

/// From `records` (other keys of the function), those of the same candidate space (the same
/// set of configs) and of another key, the kWarmStartNeighbours nearest to `key` by
/// `distance` (ties by key text; a negative or non-finite distance is no neighbour). The
/// prior interleaves their rankings: each one's best (nearest first), then each one's
/// second, ..., over the candidates each measured (not failed), by agreed time; as indices into
/// `candidates`. Empty when no record qualifies.
WarmStart neighbour_prior(const std::vector<Record>& records, const std::string& key,
                          const std::vector<std::string>& candidates, const KeyDistance& distance);

/// The prior every rank uses: `mine` if every rank computed the same one, else none (every
/// rank tunes in full). One collective, like the vote on a stored record.
WarmStart agree_on_prior(Communicator& comm, const ContextMaker& context, WarmStart mine);

}  // namespace disttune::detail
