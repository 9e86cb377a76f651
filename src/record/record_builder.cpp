// Record building: identity, fingerprint, measurement, results and stamp of a finished tuning.
#include "record/record_builder.hpp"

#include <utility>

#include "util/utc_time.hpp"

namespace disttune::detail {

Record build_record(const RecordId& id, const Fingerprint& fingerprint, TuningOutcome outcome) {
  Record record;
  record.id = id;
  record.hardware = fingerprint.hardware;
  record.deps = fingerprint.deps;
  record.measurement = std::move(outcome.measurement);
  record.flush_l2 = outcome.flush_l2;
  record.candidates = std::move(outcome.candidates);
  record.best_index = outcome.best;
  record.ranks = outcome.ranks;
  record.split_ranks = outcome.split_ranks;
  record.timer = std::move(outcome.timer);
  record.clocks = std::move(outcome.clocks);
  record.created_utc = utc_iso_now();
  record.library_version = library_version();
  return record;
}

}  // namespace disttune::detail
