// report_page: HTML and SVG text from typed records; every text from a record is escaped.
#include "cli/report_page.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <map>
#include <string_view>
#include <vector>

#include "report/readable_text.hpp"
#include "disttune/fingerprint.hpp"
#include "disttune/store.hpp"

namespace disttune::cli {
namespace {

constexpr int kRowHeight = 22;
constexpr int kLabelWidth = 360;
constexpr int kPlotWidth = 520;
constexpr int kRightMargin = 60;  // room right of the plot for the last axis label, centred on its end
// The plot ends at the largest time shown, unless that is more than this many times the
// median agreed time: one outlier (a stalled run, a config far slower than the rest) then
// goes off the scale instead of squeezing every other time to the left edge.
constexpr double kMostTimesMedian = 3.0;
constexpr std::string_view kStyle = R"(
body { font-family: sans-serif; margin: 24px; color: #1b1b1b; background: #ffffff; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
td, th { border: 1px solid #c8c8c8; padding: 3px 8px; text-align: left; }
tr.best td { background: #dff3df; font-weight: bold; }
tr.failed td { background: #fbe1e1; }
code { font-size: 12px; } pre { font-size: 11px; white-space: pre-wrap; }
.meta { color: #555555; font-size: 12px; }
.bad { color: #a00000; }
)";

// Text for HTML: valid UTF-8 (readable_text) with &, <, >, " and ' escaped.
std::string escape(std::string_view text) {
  std::string escaped;
  for (const char ch : detail::readable_text(text)) {
    switch (ch) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&#x27;"; break;
      default: escaped += ch;
    }
  }
  return escaped;
}

// printf-style number text, e.g. number("%.1f", 2.25).
std::string number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// The last non-blank line of a failure (a traceback ends with the exception), trimmed.
std::string error_summary(const std::string& error) {
  std::string last;
  std::size_t start = 0;
  while (start <= error.size()) {
    const std::size_t end = std::min(error.find('\n', start), error.size());
    const std::string line = error.substr(start, end - start);
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos) {
      last = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    }
    start = end + 1;
  }
  return last;
}

std::string error_cell(const std::string& error) {
  if (error.empty()) return "";
  const std::string summary = escape(error_summary(error));
  const std::size_t first = error.find_first_not_of(" \t\r\n");
  const std::size_t last = error.find_last_not_of(" \t\r\n");
  const bool one_line =
      first == std::string::npos || error.substr(first, last - first + 1).find('\n') == std::string::npos;
  if (one_line) return summary;
  return "<details><summary>" + summary + "</summary><pre>" + escape(error) + "</pre></details>";
}

bool has_agreed_time(const CandidateResult& candidate) {
  return candidate.measured && !candidate.failed;
}

// The time at the plot's right end: the largest sample or agreed time, capped at
// kMostTimesMedian times the median agreed time (times past it are drawn off the scale).
double plot_top(const std::vector<CandidateResult>& candidates) {
  double largest = 0.0;
  std::vector<double> agreed;
  for (const CandidateResult& candidate : candidates) {
    for (const double sample : candidate.samples) largest = std::max(largest, sample);
    if (has_agreed_time(candidate)) {
      largest = std::max(largest, candidate.agreed_ms);
      agreed.push_back(candidate.agreed_ms);
    }
  }
  if (!agreed.empty()) {
    std::nth_element(agreed.begin(), agreed.begin() + static_cast<std::ptrdiff_t>(agreed.size() / 2), agreed.end());
    const double cap = kMostTimesMedian * agreed[agreed.size() / 2];
    if (cap > 0.0) largest = std::min(largest, cap);
  }
  return largest > 0.0 ? largest * 1.05 : 1.0;
}

// One row per config: its samples as dots, its agreed time as a bar; failed ones say so.
// Times past the plot's end are drawn at its end, and the row says how far they go.
std::string svg(const Record& record) {
  const std::vector<CandidateResult>& candidates = record.candidates;
  const double top = plot_top(candidates);
  const int rows = static_cast<int>(candidates.size());
  const double scale = kPlotWidth / top;
  const auto x_of = [&](double ms) { return kLabelWidth + std::min(ms, top) * scale; };
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(kLabelWidth + kPlotWidth + kRightMargin) + "\" height=\"" +
                    std::to_string(kRowHeight * rows + 30) +
                    "\" role=\"img\" aria-label=\"timing samples per config\">" +
                    "<rect x=\"" + std::to_string(kLabelWidth) + "\" y=\"0\" width=\"" +
                    std::to_string(kPlotWidth) + "\" height=\"" + std::to_string(kRowHeight * rows) +
                    "\" fill=\"#f6f6f6\"/>";
  for (int index = 0; index < rows; ++index) {
    const CandidateResult& candidate = candidates[static_cast<std::size_t>(index)];
    const double y = index * kRowHeight + kRowHeight / 2.0;
    const bool chosen = static_cast<std::size_t>(index) == record.best_index;
    std::string label = (chosen ? "* " : "") + detail::readable_text(candidate.config);
    if (label.size() > 52) label = label.substr(0, 49) + "...";
    out += "<text x=\"" + std::to_string(kLabelWidth - 6) + "\" y=\"" + number("%g", y + 4) +
           "\" text-anchor=\"end\" font-size=\"11\" font-family=\"monospace\" font-weight=\"" +
           (chosen ? "bold" : "normal") + "\">" + escape(label) + "</text>";
    if (candidate.failed) {
      out += "<text x=\"" + std::to_string(kLabelWidth + 6) + "\" y=\"" + number("%g", y + 4) +
             "\" font-size=\"11\" fill=\"#b00000\">failed: " +
             escape(error_summary(candidate.error).substr(0, 90)) + "</text>";
      continue;
    }
    double farthest = has_agreed_time(candidate) ? candidate.agreed_ms : 0.0;
    if (has_agreed_time(candidate)) {
      out += "<rect x=\"" + std::to_string(kLabelWidth) + "\" y=\"" + number("%g", y - 6) +
             "\" width=\"" + number("%.1f", x_of(candidate.agreed_ms) - kLabelWidth) +
             "\" height=\"12\" fill=\"" + (chosen ? "#2e8b57" : "#9ab0c8") + "\" opacity=\"0.55\"/>";
    }
    for (const double sample : candidate.samples) {
      farthest = std::max(farthest, sample);
      out += "<circle cx=\"" + number("%.1f", x_of(sample)) + "\" cy=\"" + number("%.1f", y) +
             "\" r=\"3\" fill=\"" + (chosen ? "#0b5d1e" : "#1f4e79") + "\"/>";
    }
    if (farthest > top) {
      out += "<text class=\"off-scale\" x=\"" + std::to_string(kLabelWidth + kPlotWidth - 8) + "\" y=\"" +
             number("%g", y + 4) + "\" text-anchor=\"end\" font-size=\"10\" fill=\"#b00000\">off the scale: " +
             number("%.4g", farthest) + " ms &#x25B8;</text>";
    }
    if (candidate.samples.empty()) {
      out += "<text x=\"" + std::to_string(kLabelWidth + 6) + "\" y=\"" + number("%g", y + 4) +
             "\" font-size=\"11\" fill=\"#666666\">" + escape(candidate_status(candidate)) +
             ": no samples</text>";
    }
  }
  const int axis_y = kRowHeight * rows + 16;
  for (int tick = 0; tick < 5; ++tick) {
    const double value = top * tick / 4;
    out += "<text class=\"tick\" x=\"" + number("%.1f", kLabelWidth + value * scale) + "\" y=\"" +
           std::to_string(axis_y) + "\" font-size=\"10\" text-anchor=\"middle\">" +
           number("%.4g", value) + " ms</text>";
  }
  return out + "</svg>";
}

std::string table(const Record& record) {
  std::string out =
      "<table><tr><th></th><th>#</th><th>config</th><th>status</th><th>agreed ms</th>"
      "<th>samples</th><th>noise</th><th>error</th></tr>";
  for (std::size_t index = 0; index < record.candidates.size(); ++index) {
    const CandidateResult& candidate = record.candidates[index];
    const bool chosen = index == record.best_index;
    const char* css = chosen ? "best" : candidate.failed ? "failed" : "";
    out += std::string("<tr class=\"") + css + "\"><td>" + (chosen ? "chosen" : "") + "</td><td>" +
           std::to_string(index) + "</td><td><code>" + escape(candidate.config) + "</code></td><td>" +
           escape(candidate_status(candidate)) + "</td><td>" +
           (has_agreed_time(candidate) ? number("%.4f", candidate.agreed_ms) : "-") + "</td><td>" +
           std::to_string(candidate.samples.size()) + "</td><td>" + number("%.3f", candidate.noise) +
           "</td><td>" + error_cell(candidate.error) + "</td></tr>";
  }
  return out + "</table>";
}

std::string key_part(const ListedRecord& listed) {
  const Record& record = *listed.read.record;
  const Measurement& m = record.measurement;
  return "<h3>key <code>" + escape(record.id.key) + "</code></h3><p class=\"meta\">chosen: [" +
         std::to_string(record.best_index) + "] <code>" +
         escape(record.candidates.at(record.best_index).config) + "</code>; hardware " +
         escape(canonical_json(record.hardware)) + "; " + std::to_string(m.warmup_runs) +
         " warm-up + " + std::to_string(m.timed_runs) + " timed runs, " +
         escape(to_string(m.statistic)) + ", " + escape(m.strategy) + "; ranks " +
         std::to_string(record.ranks) + "; created " + escape(record.created_utc) + "; file " +
         escape(listed.file.path.string()) + "</p>" + svg(record) + table(record);
}

}  // namespace

std::string report_page(const std::string& root, const std::vector<ListedRecord>& listed) {
  std::map<std::string, std::vector<const ListedRecord*>> by_function;
  std::vector<std::string> bad;
  std::size_t count = 0;
  for (const ListedRecord& entry : listed) {
    if (!entry.read.record) {
      bad.push_back(entry.file.function + "/" + entry.file.path.filename().string() + ": " +
                    entry.read.error);
      continue;
    }
    by_function[entry.read.record->id.function_name].push_back(&entry);
    ++count;
  }
  std::string body = "<h1>disttune tuning report</h1><p class=\"meta\">cache root " + escape(root) +
                     "; " + std::to_string(count) + " records; disttune " + library_version() +
                     "</p>";
  for (auto& [function, entries] : by_function) {
    body += "<h2>" + escape(function) + "</h2>";
    std::sort(entries.begin(), entries.end(), [](const ListedRecord* a, const ListedRecord* b) {
      const RecordId& x = a->read.record->id;
      const RecordId& y = b->read.record->id;
      return std::tie(x.key, x.hardware_digest) < std::tie(y.key, y.hardware_digest);
    });
    for (const ListedRecord* entry : entries) body += key_part(*entry);
  }
  if (!bad.empty()) {
    body += "<h2>Files that are not valid records</h2><ul>";
    for (const std::string& line : bad) body += "<li class=\"bad\">" + escape(line) + "</li>";
    body += "</ul>";
  }
  return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>disttune report"
         "</title><style>" + std::string(kStyle) + "</style></head><body>" + body +
         "</body></html>\n";
}

}  // namespace disttune::cli
