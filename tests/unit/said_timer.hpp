// A Timer for protocol tests (unit and MPI): each timed run takes what the run said, whatever the load.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "disttune/timer.hpp"

namespace disttune::testing {

/// Each start/stop pair lasts `said_ms` as the run left it (no clock): the choice, the MAX
/// rule and agreement are then decided by a test's cost model, not by how late a loaded
/// machine wakes a sleeping run. (CpuTimer itself is tested with real runs elsewhere.)
class SaidTimer final : public Timer {
 public:
  void start() override {}
  void stop() override { durations_.push_back(said_ms); }
  std::vector<double> collect() override { return std::exchange(durations_, {}); }
  std::string name() const override { return "said"; }
  Value clocks() const override { return said_clocks; }
  double said_ms = 0.0;
  Value said_clocks = Value::object();  ///< what clocks() reports, as the test said

 private:
  std::vector<double> durations_;
};

}  // namespace disttune::testing
