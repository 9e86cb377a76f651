// Progress messages of long tunings, through the sink.
#include "report/progress.hpp"

#include <cstdio>
#include <utility>

#include "report/emit.hpp"

namespace disttune::detail {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kQuietStart{1};    ///< a tuning shorter than this shows nothing
constexpr std::chrono::seconds kLineInterval{5};  ///< verbose: a log line at most this often

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, seconds < 100 ? "%.1f" : "%.0f", seconds);
  return text;
}

}  // namespace

std::string progress_text(const std::string& function, std::size_t round, std::size_t candidate,
                          std::size_t count, std::size_t run, double elapsed_s) {
  std::string text = function + ": round " + std::to_string(round) + ", candidate " +
                     std::to_string(candidate + 1) + "/" + std::to_string(count) + ", " +
                     seconds_text(elapsed_s) + " s elapsed, ";
  if (run == 0) return text + "estimating the time left";
  const double left = elapsed_s / static_cast<double>(run) * static_cast<double>(count > run ? count - run : 0);
  return text + "about " + seconds_text(left) + " s left";
}

Progress::Progress(std::string function, std::size_t count, bool verbose)
    : function_(std::move(function)),
      count_(count),
      verbose_(verbose),
      started_(count, false),
      start_(Clock::now()),
      next_line_(start_ + kQuietStart) {}

void Progress::show(std::size_t candidate) {
  // The candidates started before this one have run (this one is starting).
  const std::size_t run = started_count_;
  if (candidate < started_.size() && !started_[candidate]) {
    started_[candidate] = true;
    ++started_count_;
  }
  const Clock::time_point now = Clock::now();
  if (now < next_line_) return;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const std::string text = progress_text(function_, round_, candidate, count_, run, elapsed);
  if (verbose_) {
    emit(MessageKind::log, text);
    next_line_ = now + kLineInterval;
    return;
  }
  emit(MessageKind::progress, text);
  shown_ = true;
}

void Progress::done() {
  if (shown_) emit(MessageKind::progress, "");
  shown_ = false;
}

}  // namespace disttune::detail
