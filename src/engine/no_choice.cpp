// The error text of a tuning that chose nothing.
#include "engine/no_choice.hpp"

#include <algorithm>

#include "report/failure_line.hpp"

namespace disttune::detail {
namespace {

/// clocks[name] as a count, 0 if absent or not a non-negative integer.
long long count_of(const Value& clocks, const char* name) {
  if (!clocks.is_object() || !clocks.contains(name)) return 0;
  const Value& value = clocks.at(name);
  return value.is_number_integer() && value.get<long long>() > 0 ? value.get<long long>() : 0;
}

}  // namespace

std::string no_choice_text(const std::string& subject, const std::string& key, const std::string& where,
                           const std::vector<CandidateResult>& results, const Value& clocks,
                           const std::optional<std::filesystem::path>& log) {
  const auto failed = static_cast<std::size_t>(
      std::count_if(results.begin(), results.end(), [](const CandidateResult& r) { return r.failed; }));
  std::string text;
  if (failed == results.size()) {
    text = "disttune: every config of " + subject + " failed for key " + key + where + ":";
  } else {
    text = "disttune: every finalist of " + subject + " failed for key " + key + where + " (" +
           std::to_string(failed) + " of " + std::to_string(results.size()) + " configs failed):";
  }
  std::size_t measured_ok = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].failed) {
      // One line per config (a Python failure's "Type: message (raised at ...)"); the rest,
      // a traceback, is in the log.
      text += "\n  [" + std::to_string(i) + "] " + results[i].config + ": " + failure_line(results[i].error);
    } else if (results[i].measured) {
      ++measured_ok;
    }
  }
  if (failed < results.size()) {
    text += "\n  not finalists: " + std::to_string(measured_ok) + " measured without failing, " +
            std::to_string(results.size() - failed - measured_ok) + " never run";
  }
  const long long gapped = count_of(clocks, "gapped_runs");
  const long long slow = count_of(clocks, "discarded_runs");
  if (gapped + slow > 0) {
    text += "\n  the timer discarded " + std::to_string(gapped) + " runs the host stalled inside and " +
            std::to_string(slow) +
            " at a slow clock (the record's clocks: gapped_runs, discarded_runs); work beside the runs "
            "that holds the CPU or Python's GIL (compiles, another process) stalls launches "
            "(docs/strategies.md, \"Clock control\")";
  }
  if (log) {
    text += "\n  each failure in full (tracebacks too) is in the log " + log->string();
  } else {
    text += "\n  no log was written (no cache directory); a verbose call prints each failure in full";
  }
  return text;
}

}  // namespace disttune::detail
