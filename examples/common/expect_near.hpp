// expect_near: the examples' check of a computed result against its reference.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

namespace example {

/// Throws std::runtime_error naming `what`, the value and the reference unless `value` is
/// within `relative` of `reference` (relative to the reference).
inline void expect_near(double value, double reference, double relative, const std::string& what) {
  if (!(std::fabs(value - reference) <= relative * std::fabs(reference))) {
    throw std::runtime_error("wrong " + what + " " + std::to_string(value) + ", expected " +
                             std::to_string(reference));
  }
}

}  // namespace example
