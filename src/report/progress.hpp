// Progress: a one-line progress display of long tunings, through the sink.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace disttune::detail {

/// Sends "<function>: candidate i/n" progress messages once a tuning has run for a second
/// (the stderr sink shows them only on a terminal); done() sends the empty one that ends them.
class Progress {
 public:
  explicit Progress(std::string function);
  void show(std::size_t candidate, std::size_t count);
  void done();

 private:
  std::string function_;
  std::chrono::steady_clock::time_point start_;
  bool shown_ = false;
};

}  // namespace disttune::detail
