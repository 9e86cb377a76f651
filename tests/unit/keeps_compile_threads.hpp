// A test strategy that keeps the compile threads its begin() was told of.
#pragma once

#include <cstddef>
#include <vector>

#include "disttune/strategy.hpp"

namespace disttune::testing {

/// Keeps SpaceInfo::compile_threads in `threads`, then measures candidate 0 once.
class KeepsCompileThreads final : public Strategy {
 public:
  explicit KeepsCompileThreads(std::size_t& threads) : threads_(threads) {}
  void begin(const SpaceInfo& space) override { threads_ = space.compile_threads; }
  Round first_round(std::size_t) override { return Round{{0}, 0, 1}; }
  Round next_round(const std::vector<CandidateStanding>&) override { return Round{{0}, 0, 0}; }

 private:
  std::size_t& threads_;
};

}  // namespace disttune::testing
