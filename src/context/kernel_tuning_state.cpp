// KernelTuningState: a tunable kernel's name and in-process cache of choices per key.
#include <algorithm>

#include "disttune/context.hpp"

namespace disttune {

KernelTuningState::KernelTuningState(std::string name) : name_(std::move(name)) {
  if (name_.empty()) throw std::invalid_argument("disttune: a tunable kernel needs a name");
}

KernelTuningState::~KernelTuningState() { ContextualAutotuner::kernel_destroyed(*this); }

std::optional<std::size_t> KernelTuningState::cached_index(
    const std::string& key, const std::vector<std::string>& candidates) const {
  std::lock_guard lock(mutex_);
  const auto hit = cache_.find(key);
  if (hit == cache_.end()) return std::nullopt;
  const KernelChoice& choice = hit->second;
  if (choice.best < candidates.size() && candidates[choice.best] == choice.config) return choice.best;
  const auto found = std::find(candidates.begin(), candidates.end(), choice.config);
  if (found == candidates.end()) return std::nullopt;
  return static_cast<std::size_t>(found - candidates.begin());
}

std::optional<KernelChoice> KernelTuningState::choice(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto hit = cache_.find(key);
  return hit == cache_.end() ? std::nullopt : std::optional<KernelChoice>(hit->second);
}

std::optional<KernelChoice> KernelTuningState::last_choice() const {
  std::lock_guard lock(mutex_);
  if (!last_key_) return std::nullopt;
  return cache_.at(*last_key_);
}

std::vector<KernelChoice> KernelTuningState::choices() const {
  std::lock_guard lock(mutex_);
  std::vector<KernelChoice> all;
  all.reserve(cache_.size());
  for (const auto& [key, choice] : cache_) all.push_back(choice);
  return all;
}

void KernelTuningState::remember(KernelChoice choice) {
  std::lock_guard lock(mutex_);
  std::string key = choice.key;
  const bool replaced = !cache_.insert_or_assign(key, std::move(choice)).second;
  last_key_ = std::move(key);
  if (replaced) epoch_.fetch_add(1, std::memory_order_release);
}

void KernelTuningState::clear() {
  std::lock_guard lock(mutex_);
  cache_.clear();
  last_key_.reset();
  epoch_.fetch_add(1, std::memory_order_release);
}

}  // namespace disttune
