// The whole environment at once: every setting's value checked, and variables that are no setting named.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "disttune/settings.hpp"

extern char** environ;

namespace disttune {
namespace {

constexpr std::string_view kPrefix = "TRITON_DIST_AUTOTUNE_";

/// The number of single-character insertions, deletions and substitutions from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// How many characters a and b share at their beginnings.
std::size_t shared_beginning(std::string_view a, std::string_view b) {
  return static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

/// The setting a mistyped name most likely meant: the longest shared beginning after the
/// prefix when 3 characters or more (WARMUP: WARM_START, not TIMEOUT, though as few edits
/// away), else the fewest edits; ties go to the earlier setting.
std::string closest_setting(std::string_view name) {
  const std::string_view typed = name.substr(kPrefix.size());
  std::string_view closest;
  std::pair<std::size_t, std::size_t> best{0, std::string_view::npos};  // (shared, edits)
  for (const EnvironmentSetting& setting : environment_settings()) {
    const std::size_t shared = shared_beginning(typed, setting.name.substr(kPrefix.size()));
    const std::pair<std::size_t, std::size_t> score{shared >= 3 ? shared : 0, edit_distance(name, setting.name)};
    if (score.first > best.first || (score.first == best.first && score.second < best.second)) {
      best = score;
      closest = setting.name;
    }
  }
  return std::string(closest);
}

}  // namespace

void check_environment() {
  (void)cache_keep_setting();
  (void)always_tune_setting();
  (void)version_check_setting();
  (void)table_mismatch_setting();
  (void)collective_timeout_setting();
  (void)triton_dropin_setting();
  (void)warm_start_setting();
  (void)search_effort_setting();
}

std::vector<UnknownSetting> unknown_settings() {
  std::vector<UnknownSetting> unknown;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    const std::string_view name = variable.substr(0, variable.find('='));
    if (!name.starts_with(kPrefix)) continue;
    const auto settings = environment_settings();
    const bool known = std::any_of(settings.begin(), settings.end(),
                                   [&](const EnvironmentSetting& setting) { return setting.name == name; });
    if (!known) unknown.push_back({std::string(name), closest_setting(name)});
  }
  return unknown;
}

}  // namespace disttune
