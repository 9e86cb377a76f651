// Config features: flattens canonical JSON configs into scaled numeric and categorical dimensions.
#include "strategies/config_features.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "disttune/config.hpp"

namespace disttune::detail {
namespace {

/// A config's leaves by path: the JSON value at each leaf.
using Leaves = std::map<std::string, Value>;

void flatten(const Value& value, const std::string& path, Leaves& leaves) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [name, member] : value.items()) flatten(member, path + "." + name, leaves);
  } else if (value.is_array() && !value.empty()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      flatten(value[i], path + "[" + std::to_string(i) + "]", leaves);
  } else {
    leaves[path.empty() ? "." : path] = value;
  }
}

Leaves leaves_of(const std::string& candidate) {
  Leaves leaves;
  const Value parsed = Value::parse(candidate, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    leaves["<text>"] = candidate;
  } else {
    flatten(parsed, "", leaves);
  }
  return leaves;
}

}  // namespace

double ConfigFeatures::distance(std::size_t a, std::size_t b) const {
  return std::sqrt(static_cast<double>(squared_level_gap(a, b) + mismatches(a, b)));
}

int ConfigFeatures::squared_level_gap(std::size_t a, std::size_t b) const {
  int sum = 0;
  for (std::size_t d = 0; d < numeric_names.size(); ++d) {
    const int gap = level[a][d] - level[b][d];
    sum += gap * gap;
  }
  return sum;
}

int ConfigFeatures::mismatches(std::size_t a, std::size_t b) const {
  int count = 0;
  for (std::size_t d = 0; d < categorical_names.size(); ++d) count += categorical[a][d] != categorical[b][d] ? 1 : 0;
  return count;
}

int ConfigFeatures::widest_squared_level_gap() const {
  int sum = 0;
  for (int count : level_counts) sum += (count - 1) * (count - 1);
  return sum;
}

bool ConfigFeatures::neighbours(std::size_t a, std::size_t b) const {
  int steps = 0;
  for (std::size_t d = 0; d < numeric_names.size(); ++d)
    steps += std::abs(level[a][d] - level[b][d]);
  for (std::size_t d = 0; d < categorical_names.size(); ++d)
    steps += categorical[a][d] != categorical[b][d] ? 1 : 0;
  return steps == 1;
}

int ConfigFeatures::only_difference(std::size_t a, std::size_t b) const {
  int found = -1;
  const auto differs = [&found](std::size_t d) {
    if (found >= 0) return false;
    found = static_cast<int>(d);
    return true;
  };
  for (std::size_t d = 0; d < numeric_names.size(); ++d) {
    if (level[a][d] != level[b][d] && !differs(d)) return -1;
  }
  for (std::size_t d = 0; d < categorical_names.size(); ++d) {
    if (categorical[a][d] != categorical[b][d] && !differs(numeric_names.size() + d)) return -1;
  }
  return found;
}

ConfigFeatures config_features(const std::vector<std::string>& candidates) {
  std::vector<Leaves> all;
  all.reserve(candidates.size());
  std::set<std::string> paths;
  for (const std::string& candidate : candidates) {
    all.push_back(leaves_of(candidate));
    for (const auto& leaf : all.back()) paths.insert(leaf.first);
  }
  ConfigFeatures features;
  features.level.resize(candidates.size());
  features.categorical.resize(candidates.size());
  for (const std::string& path : paths) {
    bool numeric = true;
    std::set<std::string> texts;
    for (const Leaves& leaves : all) {
      const auto found = leaves.find(path);
      const bool number = found != leaves.end() && found->second.is_number();
      numeric = numeric && number;
      texts.insert(found == leaves.end() ? std::string("<absent>") : found->second.dump());
    }
    if (texts.size() < 2) continue;  // one value in the whole space: nothing to learn from it
    if (numeric) {
      std::vector<double> values;
      for (const Leaves& leaves : all) values.push_back(leaves.at(path).get<double>());
      std::vector<double> sorted(values);
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      for (std::size_t c = 0; c < all.size(); ++c) {
        const auto rank =
            std::lower_bound(sorted.begin(), sorted.end(), values[c]) - sorted.begin();
        features.level[c].push_back(static_cast<int>(rank));
      }
      features.numeric_names.push_back(path);
      features.level_counts.push_back(static_cast<int>(sorted.size()));
    } else {
      const std::vector<std::string> ordered(texts.begin(), texts.end());
      for (std::size_t c = 0; c < all.size(); ++c) {
        const auto found = all[c].find(path);
        const std::string text =
            found == all[c].end() ? std::string("<absent>") : found->second.dump();
        const auto id = std::lower_bound(ordered.begin(), ordered.end(), text) - ordered.begin();
        features.categorical[c].push_back(static_cast<int>(id));
      }
      features.categorical_names.push_back(path);
      features.category_counts.push_back(static_cast<int>(ordered.size()));
    }
  }
  return features;
}

}  // namespace disttune::detail
