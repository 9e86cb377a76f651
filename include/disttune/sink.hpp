// The Sink seam: where disttune's console output goes (warnings, tables, log echoes, progress).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace disttune {

/// What a message is.
enum class MessageKind {
  warning,   ///< something the user should know (a refused cache directory, a stale record)
  table,     ///< a tuning's table of candidates and its choice (verbose calls); ends in '\n'
  log,       ///< one line of a tuning's log, echoed for a verbose call (the log file has it too)
  progress,  ///< "<function>: candidate i/n" of a long tuning; an empty text ends the display
};

/// "warning", "table", "log" or "progress".
std::string to_string(MessageKind kind);

/// Receives disttune's console output. Log files are not sinks: they are written as before,
/// whatever the sink. write() may be called from any thread, from several at once (tunings
/// in different threads), and should not throw: an exception from it is reported on stderr
/// with the message it was given.
class Sink {
 public:
  virtual ~Sink() = default;
  /// `text` carries no "disttune: " prefix and no trailing newline, except a table's.
  virtual void write(MessageKind kind, std::string_view text) = 0;
};

/// The default sink, today's behaviour: each message on stderr ("disttune: " before a warning
/// or log line), progress only when stderr is a terminal.
std::shared_ptr<Sink> make_stderr_sink();

/// Makes `sink` receive every message of this process from now on; nullptr restores the
/// stderr sink. Process-wide (warnings of the store or a timer belong to no one tuner).
void set_sink(std::shared_ptr<Sink> sink);

/// The sink messages go to now.
std::shared_ptr<Sink> current_sink();

}  // namespace disttune
