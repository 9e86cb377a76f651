// Rank agreement: digest check of what the ranks are about to tune (strategy options by value), and
// the cache vote.
#include "engine/rank_agreement.hpp"

#include <array>
#include <sstream>
#include <string>
#include <vector>

#include "disttune/config.hpp"
#include "disttune/deadline.hpp"
#include "disttune/error.hpp"
#include "disttune/strategy_option.hpp"

namespace disttune::detail {

CollectiveContext ContextMaker::operator()(std::string phase,
                                           std::optional<std::size_t> candidate) const {
  return CollectiveContext{std::move(phase), function, key, candidate, deadline_after(timeout)};
}

namespace {

/// The strategy's options as it reads them (effective_strategy_options), so that "0.005",
/// "5e-3" and the default agree; `refusal` gets the error of options it refuses (the rank
/// still takes part in the gather, then throws it).
Value effective_options(const Measurement& measurement, std::optional<std::string>& refusal) {
  try {
    return effective_strategy_options(measurement);
  } catch (const InvalidSetting& error) {
    refusal = error.what();
    return Value{{"refused", error.what()}};
  }
}

Value tuning_summary(const FunctionIdentity& identity, const std::string& key,
                     const std::vector<std::string>& candidates, const Measurement& measurement,
                     const Value& strategy_options, bool flushes_l2, bool split_across_ranks) {
  return Value{{"function digest", identity.digest},
               {"key", key},
               {"candidate count", candidates.size()},
               {"candidate list digest", digest_of_parts(candidates)},
               {"measurement", Value{{"warmup_runs", measurement.warmup_runs},
                                     {"timed_runs", measurement.timed_runs},
                                     {"statistic", to_string(measurement.statistic)},
                                     {"strategy", measurement.strategy},
                                     {"baseline", measurement.baseline},
                                     {"strategy_options", strategy_options},
                                     {"flush_l2", flushes_l2}}},
               {"split across ranks", split_across_ranks}};
}

/// One line per leaf where `other` differs from `reference`, named by its path
/// ("measurement.strategy_options.max_noise"); a side without the field reads "(absent)".
void describe_differences(const Value& other, const Value& reference, const std::string& path,
                          int rank, std::ostringstream& out) {
  if (other.is_object() && reference.is_object()) {
    std::vector<std::string> fields;
    for (const auto& [field, value] : reference.items()) fields.push_back(field);
    for (const auto& [field, value] : other.items()) {
      if (!reference.contains(field)) fields.push_back(field);
    }
    const Value absent;
    for (const std::string& field : fields) {
      const Value& mine = other.contains(field) ? other.at(field) : absent;
      const Value& theirs = reference.contains(field) ? reference.at(field) : absent;
      if (mine != theirs)
        describe_differences(mine, theirs, path.empty() ? field : path + "." + field, rank, out);
    }
    return;
  }
  const auto text = [](const Value& value) {
    return value.is_null() ? std::string("(absent)") : value.dump();
  };
  out << "\n  rank " << rank << " differs from rank 0 in " << path << ": " << text(other) << " vs "
      << text(reference);
}

}  // namespace

void check_ranks_agree(Communicator& comm, const ContextMaker& context,
                       const FunctionIdentity& identity, const std::string& key,
                       const std::vector<std::string>& candidates, const Measurement& measurement,
                       const Timer& timer, bool split_across_ranks) {
  std::optional<std::string> refusal;
  const Value options = effective_options(measurement, refusal);
  const std::string mine = canonical_json(tuning_summary(
      identity, key, candidates, measurement, options, timer.flushes_l2(), split_across_ranks));
  const std::vector<std::string> all = comm.all_gather(mine, context("digest check", std::nullopt));
  if (refusal) throw InvalidSetting(*refusal);
  const Value reference = Value::parse(all.front());
  std::ostringstream differences;
  for (std::size_t rank = 1; rank < all.size(); ++rank) {
    if (all[rank] != all.front())
      describe_differences(Value::parse(all[rank]), reference, "", static_cast<int>(rank),
                           differences);
  }
  const std::string text = differences.str();
  if (!text.empty()) {
    throw RankDisagreement("disttune: ranks disagree on what to tune for function '" +
                           identity.name +
                           "' (key, config count, order and pruning, and the "
                           "measurement settings, must be the same on every rank):" +
                           text);
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
