// Rank agreement: digest check of what the ranks are about to tune, and the cache vote.
#include "engine/rank_agreement.hpp"

#include <array>
#include <sstream>

#include "disttune/config.hpp"
#include "disttune/deadline.hpp"

namespace disttune::detail {

CollectiveContext ContextMaker::operator()(std::string phase,
                                           std::optional<std::size_t> candidate) const {
  return CollectiveContext{std::move(phase), function, key, candidate,
                           deadline_after(timeout)};
}

namespace {

Value tuning_summary(const FunctionIdentity& identity, const std::string& key,
                     const std::vector<std::string>& candidates, const Measurement& measurement,
                     bool flushes_l2, bool split_across_ranks) {
  return Value{{"function digest", identity.digest},
               {"key", key},
               {"candidate count", candidates.size()},
               {"candidate list digest", digest_of_parts(candidates)},
               {"measurement", Value{{"warmup_runs", measurement.warmup_runs},
                                     {"timed_runs", measurement.timed_runs},
                                     {"statistic", to_string(measurement.statistic)},
                                     {"strategy", measurement.strategy},
                                     {"baseline", measurement.baseline},
                                     {"strategy_options", measurement.strategy_options},
                                     {"flush_l2", flushes_l2}}},
               {"split across ranks", split_across_ranks}};
}

}  // namespace

void check_ranks_agree(Communicator& comm, const ContextMaker& context,
                       const FunctionIdentity& identity, const std::string& key,
                       const std::vector<std::string>& candidates, const Measurement& measurement,
                       const Timer& timer, bool split_across_ranks) {
  const std::string mine = canonical_json(
      tuning_summary(identity, key, candidates, measurement, timer.flushes_l2(), split_across_ranks));
  const std::vector<std::string> all = comm.all_gather(mine, context("digest check", std::nullopt));
  const Value reference = Value::parse(all.front());
  std::ostringstream differences;
  for (std::size_t rank = 1; rank < all.size(); ++rank) {
    if (all[rank] == all.front()) continue;
    const Value other = Value::parse(all[rank]);
    for (const auto& [field, value] : reference.items()) {
      if (other.at(field) != value) {
        differences << "\n  rank " << rank << " differs from rank 0 in " << field << ": "
                    << other.at(field).dump() << " vs " << value.dump();
      }
    }
  }
  const std::string text = differences.str();
  if (!text.empty()) {
    throw RankDisagreement("disttune: ranks disagree on what to tune for function '" +
                           identity.name + "' (key, config count, order and pruning must be the "
                           "same on every rank):" + text);
  }
}

std::optional<std::size_t> vote_on_stored_choice(Communicator& comm, const ContextMaker& context,
                                                 std::optional<std::size_t> stored) {
  const double mine = stored ? static_cast<double>(*stored) : -1.0;
  std::array<double, 2> extremes{mine, -mine};  // max of both gives (max, -min)
  comm.all_reduce_max(extremes, context("cache vote", std::nullopt));
  const bool unanimous = extremes[0] == -extremes[1] && extremes[0] >= 0.0;
  return unanimous ? stored : std::nullopt;
}

}  // namespace disttune::detail
