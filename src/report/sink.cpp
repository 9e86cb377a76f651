// The process-wide sink, the stderr sink, and sending one message through them.
#include "disttune/sink.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <utility>

#include "report/emit.hpp"

namespace disttune {
namespace {

class StderrSink final : public Sink {
 public:
  void write(MessageKind kind, std::string_view text) override {
    std::string line;
    switch (kind) {
      case MessageKind::warning:
      case MessageKind::log:
        line = "disttune: ";
        line += text;
        line += '\n';
        break;
      case MessageKind::table:
        line = text;
        break;
      case MessageKind::progress:
        if (!terminal_) return;
        if (text.empty()) {
          if (!progress_shown_) return;
          line = "\r\033[K";
          progress_shown_ = false;
        } else {
          line = "\rdisttune: ";
          line += text;
          progress_shown_ = true;
        }
        break;
    }
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }

 private:
  const bool terminal_ = ::isatty(STDERR_FILENO) == 1;
  std::atomic<bool> progress_shown_ = false;
};

struct SinkSlot {
  std::mutex mutex;  ///< guards `sink`; never held while a sink writes
  std::shared_ptr<Sink> sink = make_stderr_sink();
};

SinkSlot& slot() {
  static SinkSlot* const the_slot = new SinkSlot;  // never destroyed: usable until exit
  return *the_slot;
}

}  // namespace

std::string to_string(MessageKind kind) {
  switch (kind) {
    case MessageKind::warning: return "warning";
    case MessageKind::table: return "table";
    case MessageKind::log: return "log";
    case MessageKind::progress: return "progress";
  }
  return "unknown";
}

std::shared_ptr<Sink> make_stderr_sink() { return std::make_shared<StderrSink>(); }

void set_sink(std::shared_ptr<Sink> sink) {
  if (!sink) sink = make_stderr_sink();
  std::shared_ptr<Sink> replaced;
  std::lock_guard lock(slot().mutex);
  replaced = std::exchange(slot().sink, std::move(sink));
}

std::shared_ptr<Sink> current_sink() {
  std::lock_guard lock(slot().mutex);
  return slot().sink;
}

namespace detail {

void emit(MessageKind kind, std::string_view text) {
  // Not under the slot's lock: a sink may take other locks (Python's GIL) of its own.
  const std::shared_ptr<Sink> sink = current_sink();
  try {
    sink->write(kind, text);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "disttune: the output sink failed (%s); its %s message was:\n%.*s\n",
                 error.what(), to_string(kind).c_str(), static_cast<int>(text.size()), text.data());
  } catch (...) {
    std::fprintf(stderr, "disttune: the output sink failed; its %s message was:\n%.*s\n",
                 to_string(kind).c_str(), static_cast<int>(text.size()), text.data());
  }
}

}  // namespace detail
}  // namespace disttune
