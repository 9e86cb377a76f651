// Rank-split measurement: local measuring of a share, one all-gather, the same merge everywhere.
#include "engine/rank_split.hpp"

#include <optional>

#include "disttune/config.hpp"
#include "disttune/function_tuner.hpp"

namespace disttune::detail {
namespace {

Value share_to_json(const std::vector<std::size_t>& share, const std::vector<CandidateResult>& results) {
  Value parts = Value::array();
  for (std::size_t i = 0; i < share.size(); ++i) {
    const CandidateResult& r = results[i];
    parts.push_back(Value{{"index", share[i]},
                          {"failed", r.failed},
                          {"error", r.error},
                          {"samples", r.samples},
                          {"ms", r.failed ? 0.0 : r.local_ms},
                          {"noise", r.noise},
                          {"measured", r.measured},
                          {"dropped", r.dropped}});
  }
  return parts;
}

/// Reads rank `rank`'s part into `results`, checking it names exactly the rank's share.
void merge_part(const std::string& text, int rank, int ranks, std::vector<CandidateResult>& results) {
  const std::vector<std::size_t> share = split_share(results.size(), rank, ranks);
  const Value parts = Value::parse(text, nullptr, false);
  if (!parts.is_array() || parts.size() != share.size()) {
    throw RankDisagreement("disttune: rank " + std::to_string(rank) + " reported " +
                           (parts.is_array() ? std::to_string(parts.size()) : std::string("unreadable")) +
                           " results of a rank-split tuning for its share of " + std::to_string(share.size()) +
                           " candidates");
  }
  for (std::size_t i = 0; i < share.size(); ++i) {
    const Value& part = parts[i];
    if (!part.is_object() || part.value("index", results.size()) != share[i]) {
      throw RankDisagreement("disttune: rank " + std::to_string(rank) +
                             " reported a candidate outside its share of a rank-split tuning");
    }
    CandidateResult& result = results[share[i]];
    try {
      result.failed = part.at("failed").get<bool>();
      result.error = part.at("error").get<std::string>();
      result.samples = part.at("samples").get<std::vector<double>>();
      result.local_ms = part.at("ms").get<double>();
      result.noise = part.at("noise").get<double>();
      result.measured = part.at("measured").get<bool>();
      result.dropped = part.at("dropped").get<bool>();
    } catch (const Value::exception& error) {
      throw RankDisagreement("disttune: rank " + std::to_string(rank) +
                             "'s results of a rank-split tuning do not read: " + error.what());
    }
    result.agreed_ms = result.local_ms;
    if (result.failed) result.error = "on rank " + std::to_string(rank) + ": " + result.error;
  }
}

}  // namespace

std::vector<CandidateResult> measure_split(const std::vector<std::string>& candidates, Communicator& comm,
                                           const ContextMaker& context, const LocalMeasurer& measure) {
  const std::vector<std::size_t> share = split_share(candidates.size(), comm.rank(), comm.size());
  std::vector<CandidateResult> local;
  if (!share.empty()) {
    std::vector<std::string> texts;
    for (std::size_t i : share) texts.push_back(candidates[i]);
    local = measure(texts);
  }
  const std::vector<std::string> parts =
      comm.all_gather(share_to_json(share, local).dump(), context("split results", std::nullopt));
  std::vector<CandidateResult> results(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) results[i].config = candidates[i];
  for (int rank = 0; rank < comm.size(); ++rank) {
    merge_part(parts.at(static_cast<std::size_t>(rank)), rank, comm.size(), results);
  }
  return results;
}

std::optional<std::size_t> best_of(const std::vector<CandidateResult>& results) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const CandidateResult& result = results[i];
    if (!result.measured || result.failed || result.dropped) continue;
    if (!best || result.agreed_ms < results[*best].agreed_ms) best = i;
  }
  return best;
}

}  // namespace disttune::detail
