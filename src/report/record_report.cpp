// report_of_record: a stored record as the report of a choice read from a store.
#include <string>
#include <utility>

#include "disttune/report.hpp"
#include "disttune/store.hpp"

namespace disttune {

std::string source_name(const TuningReport& report) {
  switch (report.source) {
    case TuningReport::Source::stored: return report.store;
    case TuningReport::Source::memory: return "memory";
    case TuningReport::Source::table: return "table";
    case TuningReport::Source::tuned: break;
  }
  return "tuned";
}

TuningReport report_of_record(const Record& record, std::string store) {
  TuningReport report;
  // A record a table import wrote came from that table, wherever it was read from since.
  report.source = record.imported ? TuningReport::Source::table : TuningReport::Source::stored;
  report.store = std::move(store);
  report.function = record.id.function_name;
  report.key = record.id.key;
  report.candidates = record.candidates;
  report.best = record.best_index;
  report.timer = record.timer;
  report.split_ranks = record.split_ranks;
  if (record.warm_start) report.warm_start_from = record.warm_start->from_keys;
  report.pruned = record.pruned;
  report.prepared = record.prepared;
  return report;
}

}  // namespace disttune
