// Rank-split measurement: each rank measures its share of the candidates; one all-gather merges.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "engine/rank_agreement.hpp"
#include "disttune/communicator.hpp"
#include "disttune/tuning.hpp"

namespace disttune::detail {

/// Measures a Tuning of the given candidates (canonical JSON texts) alone on this rank,
/// with no collective, and returns its results in the same order.
using LocalMeasurer = std::function<std::vector<CandidateResult>(const std::vector<std::string>& share)>;

/// This rank measures its share of `candidates` (split_share()) through `measure`; then the
/// ranks all-gather every share's results once (deadline: `context`) and every rank returns
/// the same results for every candidate: time, noise, samples, failure and reason from the
/// rank that measured it (agreed_ms is that rank's time). Throws CollectiveTimeout, or
/// RankDisagreement if a rank reports other candidates than its share.
std::vector<CandidateResult> measure_split(const std::vector<std::string>& candidates, Communicator& comm,
                                           const ContextMaker& context, const LocalMeasurer& measure);

/// The best of merged results: lowest agreed time among those measured, not failed and not
/// dropped, ties to the lowest index; nullopt if none.
std::optional<std::size_t> best_of(const std::vector<CandidateResult>& results);

}  // namespace disttune::detail
