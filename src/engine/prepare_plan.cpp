// PreparePlan: deterministic chunks of a round named to the prepare hook, the rest as ahead.
#include "engine/prepare_plan.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include "util/exception_text.hpp"

namespace disttune::detail {
namespace {

std::string prepare_error() { return "prepare: " + exception_text(std::current_exception()); }

}  // namespace

PreparePlan::PreparePlan(PrepareHook hook, std::size_t count, std::size_t chunk)
    : hook_(std::move(hook)), chunk_(chunk), outcome_(count), named_(count, false), place_(count, kNowhere) {
  if (!hook_) throw std::invalid_argument("disttune: a prepare plan needs a prepare hook");
  if (chunk_ == 0) throw std::invalid_argument("disttune: prepare chunks need at least one candidate");
}

void PreparePlan::learn_round(const Tuning& tuning) {
  if (round_ == tuning.rounds_started()) return;
  round_ = tuning.rounds_started();
  for (std::size_t c : order_) place_[c] = kNowhere;
  order_.clear();
  // An interleaved round names each candidate once per pass: its first listing counts.
  for (std::size_t c : tuning.current_round().candidates) {
    if (c < place_.size() && place_[c] == kNowhere) {
      place_[c] = order_.size();
      order_.push_back(c);
    }
  }
  strategy_ahead_ = tuning.ahead();
  unscanned_ = 0;
  strategy_ahead_offered_ = false;
}

void PreparePlan::name_ahead(std::size_t c, std::vector<std::size_t>& ahead) {
  if (c >= named_.size() || named_[c] || outcome_[c]) return;
  named_[c] = true;
  ahead.push_back(c);
}

bool PreparePlan::named(std::size_t candidate) const { return candidate < named_.size() && named_[candidate]; }

bool PreparePlan::settled(std::size_t candidate) const {
  return candidate < outcome_.size() && outcome_[candidate].has_value();
}

std::size_t PreparePlan::named_count() const {
  return static_cast<std::size_t>(std::count(named_.begin(), named_.end(), true));
}

std::vector<std::size_t> PreparePlan::round_ahead(std::size_t rest) {
  std::vector<std::size_t> ahead;
  // Each of the round's candidates is offered once: the scan never goes back.
  for (unscanned_ = std::max(unscanned_, rest); unscanned_ < order_.size(); ++unscanned_) {
    name_ahead(order_[unscanned_], ahead);
  }
  if (!strategy_ahead_offered_) {
    strategy_ahead_offered_ = true;
    for (std::size_t c : strategy_ahead_) name_ahead(c, ahead);
  }
  return ahead;
}

void PreparePlan::start_round(const Tuning& tuning) {
  learn_round(tuning);
  const std::vector<std::size_t> ahead = round_ahead(0);
  if (ahead.empty()) return;
  try {
    (void)hook_({}, ahead);
  } catch (...) {
    // Nothing waits on them; each is asked for in `now` at its turn, and fails there.
    for (std::size_t c : ahead) named_[c] = false;
  }
}

std::string PreparePlan::ready(const Tuning& tuning, std::size_t candidate) {
  if (const std::optional<std::string>& known = outcome_.at(candidate)) return *known;
  learn_round(tuning);
  std::vector<std::size_t> now;
  std::size_t rest = 0;  // where the round's candidates that may go ahead begin
  if (place_[candidate] == kNowhere) {
    now.push_back(candidate);
  } else {
    const std::size_t first = place_[candidate] / chunk_ * chunk_;
    rest = std::min(order_.size(), first + chunk_);
    for (std::size_t i = first; i < rest; ++i) {
      if (!outcome_[order_[i]]) now.push_back(order_[i]);
    }
  }
  for (std::size_t c : now) named_[c] = true;
  const std::vector<std::size_t> ahead = round_ahead(rest);
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
