// format_table: a tuning report as a human-readable table.
#include <cstdio>
#include <sstream>
#include <string>

#include "disttune/report.hpp"
#include "report/failure_line.hpp"

namespace disttune {
namespace {

std::string source_text(const TuningReport& report) {
  switch (report.source) {
    case TuningReport::Source::stored: return "from " + report.store;
    case TuningReport::Source::memory: return "from memory";
    case TuningReport::Source::table: return "from an imported table";
    case TuningReport::Source::tuned: break;
  }
  return "tuned";
}

}  // namespace

std::string format_table(const TuningReport& report) {
  std::ostringstream out;
  out << "disttune: " << report.function << " key " << report.key << " ("
      << source_text(report) << ")\n";
  out << "    #  status   time_ms      samples  config\n";
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    const CandidateResult& c = report.candidates[i];
    char line[96];
    const char* status = c.failed ? "failed" : c.dropped ? "dropped" : c.measured ? "ok" : "skipped";
    if (c.failed || !c.measured) {
      std::snprintf(line, sizeof line, " %s %3zu  %-7s  %9s  %11zu  ", i == report.best ? "*" : " ",
                    i, status, "-", c.samples.size());
    } else {
      std::snprintf(line, sizeof line, " %s %3zu  %-7s  %9.4f  %11zu  ", i == report.best ? "*" : " ",
                    i, status, c.agreed_ms, c.samples.size());
    }
    out << line << c.config;
    if (c.failed) out << "  (" << detail::failure_line(c.error) << ")";  // in full in the log
    if (c.within_noise) out << "  (within noise)";
    out << '\n';
  }
  out << "  best: [" << report.best << "] " << report.candidates.at(report.best).config << '\n';
  if (!report.pruned.empty()) {
    out << "  pruned for this key (" << report.pruned.size() << ", never run):";
    for (const std::string& config : report.pruned) out << ' ' << config;
    out << '\n';
  }
  if (report.prepared) {
    std::size_t measured = 0;
    for (const CandidateResult& c : report.candidates) measured += c.measured ? 1 : 0;
    out << "  compiled " << *report.prepared << ", measured " << measured << " of "
        << report.candidates.size() << " candidates (compiles named ahead and never measured: "
        << (*report.prepared > measured ? *report.prepared - measured : 0) << ")\n";
  }
  out << "  timer: " << (report.timer.empty() ? "not recorded" : report.timer) << '\n';
  if (report.record_path) out << "  record: " << report.record_path->string() << '\n';
  if (report.log_path) out << "  log: " << report.log_path->string() << '\n';
  return out.str();
}

}  // namespace disttune
