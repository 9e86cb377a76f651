// Record building: the disk record a finished function-level tuning leaves.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "disttune/fingerprint.hpp"
#include "disttune/measurement.hpp"
#include "disttune/store.hpp"
#include "disttune/candidate_result.hpp"

namespace disttune::detail {

/// How a finished tuning was measured, for its record.
struct TuningOutcome {
  Measurement measurement;
  bool flush_l2 = false;                    ///< the timer's Timer::flushes_l2()
  std::vector<CandidateResult> candidates;  ///< in candidate-list order
  std::size_t best = 0;
  int ranks = 1;                            ///< ranks that agreed on it
  int split_ranks = 0;                      ///< > 0: measured split across this many ranks
  std::string timer;                        ///< the timer's Timer::name()
  Value clocks = Value::object();           ///< the timer's Timer::clocks()
};

/// The record of `outcome` for `id` on the machine of `fingerprint`, stamped now with this
/// library's version.
Record build_record(const RecordId& id, const Fingerprint& fingerprint, TuningOutcome outcome);

}  // namespace disttune::detail
