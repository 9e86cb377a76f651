// Progress: a one-line progress display on stderr for long tunings, when it is a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace disttune::detail {

/// Shows "disttune: <function>: candidate i/n" on stderr once a tuning has run for a second,
/// only when stderr is a terminal; done() clears the line.
class Progress {
 public:
  explicit Progress(std::string function);
  void show(std::size_t candidate, std::size_t count);
  void done();

 private:
  std::string function_;
  std::chrono::steady_clock::time_point start_;
  bool terminal_;
  bool shown_ = false;
};

}  // namespace disttune::detail
