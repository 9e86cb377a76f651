// FactsTimer: forwards to another Timer and adds the front end's facts to its fingerprint.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "disttune/timer.hpp"

namespace disttune::python {

/// Times exactly as `inner` does; hardware() and deps() are inner's merged with `hardware`
/// and `deps` (e.g. the torch and Triton versions), so that they join the disk key and record.
class FactsTimer final : public Timer {
 public:
  FactsTimer(std::shared_ptr<Timer> inner, Value hardware, Value deps)
      : inner_(std::move(inner)), hardware_(std::move(hardware)), deps_(std::move(deps)) {}
  void begin_tuning() override { inner_->begin_tuning(); }
  void prepare_timed_run() override { inner_->prepare_timed_run(); }
  bool flushes_l2() const override { return inner_->flushes_l2(); }
  void start() override { inner_->start(); }
  void stop() override { inner_->stop(); }
  std::vector<double> collect() override { return inner_->collect(); }
  bool holds_pairs_across_candidates() const override { return inner_->holds_pairs_across_candidates(); }
  std::optional<std::vector<double>> time_batch(const std::function<void()>& run,
                                                int runs) override {
    return inner_->time_batch(run, runs);
  }
  std::string name() const override { return inner_->name(); }
  Value hardware() const override { return merged(inner_->hardware(), hardware_); }
  Value deps() const override { return merged(inner_->deps(), deps_); }
  Value clocks() const override { return inner_->clocks(); }

 private:
  static Value merged(Value base, const Value& extra) {
    base.update(extra);
    return base;
  }
  std::shared_ptr<Timer> inner_;
  Value hardware_;
  Value deps_;
};

}  // namespace disttune::python
