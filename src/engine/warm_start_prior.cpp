// Neighbouring keys' records -> a ranked prior, and the ranks' agreement on it.
#include "engine/warm_start_prior.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace disttune::detail {
namespace {

/// A record's measured candidates' configs (those a strategy dropped too: their times are
/// real), the record's choice first, then fastest first.
std::vector<std::string> ranking(const Record& record) {
  std::vector<const CandidateResult*> measured;
  for (const CandidateResult& result : record.candidates) {
    if (result.measured && !result.failed) measured.push_back(&result);
  }
  std::stable_sort(measured.begin(), measured.end(),
                   [](const CandidateResult* a, const CandidateResult* b) { return a->agreed_ms < b->agreed_ms; });
  // The record's choice leads even where a baseline or a near-tie rule kept a slower one.
  std::vector<std::string> configs{record.candidates[record.best_index].config};
  for (const CandidateResult* result : measured) {
    if (result->config != configs.front()) configs.push_back(result->config);
  }
  return configs;
}

/// FNV-1a of the prior and its keys, in 52 bits: exactly representable as a double.
double prior_digest(const WarmStart& prior) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto mix = [&](std::uint64_t value) { hash = (hash ^ value) * 1099511628211ull; };
  for (const std::size_t index : prior.prior) mix(index);
  mix(~0ull);
  for (const std::string& key : prior.from_keys) {
    for (const unsigned char ch : key) mix(ch);
    mix(0x100);
  }
  return static_cast<double>(hash & ((std::uint64_t{1} << 52) - 1));
}

}  // namespace

WarmStart neighbour_prior(const std::vector<Record>& records, const std::string& key,
                          const std::vector<std::string>& candidates, const KeyDistance& distance) {
  const std::set<std::string> space(candidates.begin(), candidates.end());
  std::vector<std::pair<double, const Record*>> near;
  for (const Record& record : records) {
    if (record.id.key == key || record.candidates.size() != candidates.size()) continue;
    std::set<std::string> theirs;
    for (const CandidateResult& result : record.candidates) theirs.insert(result.config);
    if (theirs != space) continue;
    const double d = distance ? distance(key, record.id.key) : default_key_distance(key, record.id.key);
    if (std::isfinite(d) && d >= 0.0) near.emplace_back(d, &record);
  }
  std::sort(near.begin(), near.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->id.key < b.second->id.key;
  });
  if (near.size() > kWarmStartNeighbours) near.resize(kWarmStartNeighbours);

  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < candidates.size(); ++i) index_of.emplace(candidates[i], i);
  WarmStart prior;
  std::vector<std::vector<std::string>> rankings;
  for (const auto& [d, record] : near) {
    prior.from_keys.push_back(record->id.key);
    rankings.push_back(ranking(*record));
  }
  std::vector<bool> taken(candidates.size(), false);
  for (std::size_t place = 0; place < candidates.size(); ++place) {
    for (const std::vector<std::string>& configs : rankings) {
      if (place >= configs.size()) continue;
      const std::size_t index = index_of.at(configs[place]);
      if (!taken[index]) prior.prior.push_back(index), taken[index] = true;
    }
  }
  if (prior.prior.empty()) prior.from_keys.clear();
  return prior;
}

WarmStart agree_on_prior(Communicator& comm, const ContextMaker& context, WarmStart mine) {
  const double digest = prior_digest(mine);
  std::array<double, 2> extremes{digest, -digest};  // max of both gives (max, -min)
  comm.all_reduce_max(extremes, context("warm start vote", std::nullopt));
  if (extremes[0] != -extremes[1]) return {};
  return mine;
}

}  // namespace disttune::detail
