// LaunchLedger: what one outer run launched through the contextual tuner, and where it failed.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "context/key_tuning.hpp"

namespace disttune::detail {

/// One (kernel, key) being tuned in the current run() call, with its place in the outer runs.
struct TuningSlot {
  std::unique_ptr<KeyTuning> tuning;
  int created_run = 0;                    ///< outer run it was created in
  std::size_t created_at = 0;             ///< launch ordinal within that run
  bool checked = false;                   ///< digest check and owed barriers done
  bool launched = false;                  ///< launched in the current outer run
  std::optional<std::size_t> timed_pair;  ///< its timer pair in the current outer run
};

/// The unfinished tunings of a run() call, in creation order.
using TuningSlots = std::vector<std::unique_ptr<TuningSlot>>;

/// One launch of the current outer run.
struct LaunchRecord {
  TuningSlot* slot = nullptr;  ///< null: a launch of a cached or single candidate
  std::size_t candidate = 0;
};

/// The launches of one outer run, in order: their digest (which the ranks compare), which
/// were timed, this rank's first failure, and whether the run is being abandoned.
class LaunchLedger {
 public:
  /// Forgets the previous outer run.
  void clear();
  /// Whether launches are written into the digest (default yes). One rank has no peer to
  /// compare with: it keeps no launch text, and digest() is then empty.
  void keep_digest(bool keep) { keep_digest_ = keep; }
  /// Notes a launch; `kind` is 'c' (cached), 'w' (untimed step) or 't' (timed). Returns its
  /// ordinal in the run.
  std::size_t record(TuningSlot* slot, const std::string& kernel, const std::string& key,
                     std::size_t candidate, char kind);
  /// Launch `ordinal` is timed: returns its timer pair's index in this run.
  std::size_t note_timed(std::size_t ordinal);
  /// This rank's launch `ordinal` failed; only the first failure is kept.
  void note_failure(std::size_t ordinal, std::string reason);

  const std::vector<LaunchRecord>& launches() const { return launches_; }
  std::size_t size() const { return launches_.size(); }
  /// SHA-256 hex of what was launched (kernel, key, candidate, kind per launch); empty
  /// when the digest is not kept.
  std::string digest() const;
  /// Ordinals of this run's timer pairs, in order.
  const std::vector<std::size_t>& timed_launches() const { return timed_launches_; }
  std::optional<std::size_t> failed_launch() const { return failed_launch_; }
  const std::string& failure_reason() const { return failure_reason_; }

  std::optional<std::size_t> abandoned_at;  ///< launch where a failure (any rank's) stopped the run
  std::optional<std::string> disagreement;  ///< found at a launch: the run cannot go on

 private:
  std::vector<LaunchRecord> launches_;
  bool keep_digest_ = true;
  std::string launch_text_;
  std::vector<std::size_t> timed_launches_;
  std::optional<std::size_t> failed_launch_;
  std::string failure_reason_;
};

}  // namespace disttune::detail
