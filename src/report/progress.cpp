// Progress display of long tunings on a terminal.
#include "report/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace disttune::detail {

Progress::Progress(std::string function)
    : function_(std::move(function)),
      start_(std::chrono::steady_clock::now()),
      terminal_(::isatty(STDERR_FILENO) == 1) {}

void Progress::show(std::size_t candidate, std::size_t count) {
  if (!terminal_ || std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  std::fprintf(stderr, "\rdisttune: %s: candidate %zu/%zu", function_.c_str(), candidate + 1, count);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::done() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
  shown_ = false;
}

}  // namespace disttune::detail
