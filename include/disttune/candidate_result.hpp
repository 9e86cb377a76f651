// CandidateResult: one candidate's measurement, as a tuning, a record and a report hold it.
#pragma once

#include <string>
#include <vector>

namespace disttune {

/// One candidate's measurement as this rank saw it, and the agreed outcome.
struct CandidateResult {
  std::string config;             ///< canonical JSON of the config
  bool failed = false;            ///< failed here or on any rank
  std::string error;              ///< this rank's failure reason; "failed on another rank" if not here
  std::vector<double> samples;    ///< this rank's timed samples (ms), in order
  double local_ms = 0.0;          ///< this rank's statistic of its samples
  double agreed_ms = 0.0;         ///< the statistic agreed across ranks (MAX), what selection uses
  double noise = 0.0;             ///< agreed relative spread of the samples (median abs. deviation / median)
  bool measured = false;          ///< false if the strategy never reached it
  bool dropped = false;           ///< measured, but left out of the last round by the strategy
  bool within_noise = false;      ///< the measurement could not tell it apart from the choice (or it is the choice, tied)
};

}  // namespace disttune
