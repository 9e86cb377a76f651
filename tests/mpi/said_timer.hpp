// A Timer for the MPI protocol tests: each timed run takes what the run said, whatever the load.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "disttune/timer.hpp"

namespace disttune::test {

/// Each start/stop pair lasts `said_ms` as the run left it: the MAX rule, agreement and the
/// choice are then decided by the tests' cost models, not by how late a loaded machine wakes
/// a sleeping rank. (The CPU timer itself is tested in tests/unit and by example_scale_mpi.)
class SaidTimer final : public Timer {
 public:
  void start() override {}
  void stop() override { durations_.push_back(said_ms); }
  std::vector<double> collect() override { return std::exchange(durations_, {}); }
  std::string name() const override { return "said"; }
  double said_ms = 0.0;

 private:
  std::vector<double> durations_;
};

}  // namespace disttune::test
