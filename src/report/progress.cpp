// Progress messages of long tunings, through the sink.
#include "report/progress.hpp"

#include "report/emit.hpp"

namespace disttune::detail {

Progress::Progress(std::string function)
    : function_(std::move(function)), start_(std::chrono::steady_clock::now()) {}

void Progress::show(std::size_t candidate, std::size_t count) {
  if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  emit(MessageKind::progress, function_ + ": candidate " + std::to_string(candidate + 1) + "/" +
                                  std::to_string(count));
  shown_ = true;
}

void Progress::done() {
  if (shown_) emit(MessageKind::progress, "");
  shown_ = false;
}

}  // namespace disttune::detail
