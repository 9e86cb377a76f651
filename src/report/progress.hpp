// Progress: where a long tuning is (round, candidate, time spent and left), through the sink.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace disttune::detail {

/// The text of one progress message: "<function>: round R, candidate I/N, E s elapsed, about
/// L s left", where L is the time per candidate run so far (E / `run`) times the candidates
/// never run yet (N - `run`); "estimating" until one has run.
std::string progress_text(const std::string& function, std::size_t round, std::size_t candidate,
                          std::size_t count, std::size_t run, double elapsed_s);

/// Reports a tuning's progress once it has run for a second: on every candidate's start a
/// progress message (the stderr sink shows it, redrawn in place, on a terminal only); when
/// `verbose`, instead a log line every 5 seconds (shown on or off a terminal). done() ends
/// the display.
class Progress {
 public:
  Progress(std::string function, std::size_t count, bool verbose);
  /// Candidate `candidate` starts its runs of the current round.
  void show(std::size_t candidate);
  /// The current round ended; the next one is counted from 1 up.
  void round_ended() { ++round_; }
  void done();

 private:
  std::string function_;
  std::size_t count_;
  bool verbose_;
  std::size_t round_ = 1;
  std::vector<bool> started_;  ///< per candidate: whether it has started a round
  std::size_t started_count_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point next_line_;
  bool shown_ = false;
};

}  // namespace disttune::detail
