// PreparePlan: deterministic chunks of a round named to the prepare hook, the rest as ahead.
#include "engine/prepare_plan.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

namespace disttune::detail {
namespace {

/// The distinct entries of `list`, in order of first appearance (an interleaved round names
/// each candidate once per pass).
std::vector<std::size_t> distinct(const std::vector<std::size_t>& list) {
  std::vector<std::size_t> out;
  for (std::size_t c : list) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::string prepare_error() {
  try {
    throw;
  } catch (const std::exception& error) {
    return std::string("prepare: ") + error.what();
  } catch (...) {
    return "prepare: unknown exception";
  }
}

}  // namespace

PreparePlan::PreparePlan(PrepareHook hook, std::size_t count, std::size_t chunk)
    : hook_(std::move(hook)), chunk_(chunk), outcome_(count) {
  if (!hook_) throw std::invalid_argument("disttune: a prepare plan needs a prepare hook");
  if (chunk_ == 0) throw std::invalid_argument("disttune: prepare chunks need at least one candidate");
}

std::string PreparePlan::ready(const Tuning& tuning, std::size_t candidate) {
  if (const std::optional<std::string>& known = outcome_.at(candidate)) return *known;
  const std::vector<std::size_t> round = distinct(tuning.current_round().candidates);
  const auto found = std::find(round.begin(), round.end(), candidate);
  const std::size_t first = found == round.end() ? 0 : (static_cast<std::size_t>(found - round.begin()) / chunk_) * chunk_;
  std::vector<std::size_t> now;
  std::vector<std::size_t> ahead;
  auto unprepared = [&](std::size_t c) {
    return c < outcome_.size() && !outcome_[c] && std::find(now.begin(), now.end(), c) == now.end() &&
           std::find(ahead.begin(), ahead.end(), c) == ahead.end();
  };
  if (found == round.end()) {
    now.push_back(candidate);
  } else {
    for (std::size_t i = first; i < std::min(round.size(), first + chunk_); ++i) {
      if (unprepared(round[i])) now.push_back(round[i]);
    }
  }
  const std::size_t rest = found == round.end() ? 0 : first + chunk_;
  for (std::size_t i = rest; i < round.size(); ++i) {
    if (unprepared(round[i])) ahead.push_back(round[i]);
  }
  for (std::size_t c : tuning.ahead()) {
    if (unprepared(c)) ahead.push_back(c);
  }
  std::vector<std::string> reasons;
  try {
    reasons = hook_(now, ahead);
    if (reasons.size() != now.size()) {
      throw std::length_error("answered " + std::to_string(reasons.size()) + " entries for " +
                              std::to_string(now.size()) + " candidates");
    }
  } catch (...) {
    reasons.assign(now.size(), prepare_error());
  }
  for (std::size_t i = 0; i < now.size(); ++i) outcome_[now[i]] = std::move(reasons[i]);
  return *outcome_[candidate];
}

}  // namespace disttune::detail
