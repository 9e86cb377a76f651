// LaunchLedger: the per-outer-run record of launches, timer pairs and the first failure.
#include "context/launch_ledger.hpp"

#include "disttune/config.hpp"
#include "report/readable_text.hpp"

namespace disttune::detail {

void LaunchLedger::clear() {
  launches_.clear();
  launch_text_.clear();
  timed_launches_.clear();
  failed_launch_.reset();
  failure_reason_.clear();
  abandoned_at.reset();
  disagreement.reset();
}

std::size_t LaunchLedger::record(TuningSlot* slot, const std::string& kernel, const std::string& key,
                                 std::size_t candidate, char kind) {
  if (keep_digest_) {
    launch_text_ += kernel;
    launch_text_ += '\x1f';
    launch_text_ += key;
    launch_text_ += '\x1f';
    launch_text_ += std::to_string(candidate);
    launch_text_ += kind;
    launch_text_ += '\x1e';
  }
  launches_.push_back(LaunchRecord{slot, candidate});
  return launches_.size() - 1;
}

std::size_t LaunchLedger::note_timed(std::size_t ordinal) {
  timed_launches_.push_back(ordinal);
  return timed_launches_.size() - 1;
}

void LaunchLedger::note_failure(std::size_t ordinal, std::string reason) {
  if (failed_launch_ && *failed_launch_ <= ordinal) return;
  failed_launch_ = ordinal;
  failure_reason_ = detail::readable_text(reason);  // records, logs and tables need UTF-8
}

std::string LaunchLedger::digest() const { return keep_digest_ ? sha256_hex(launch_text_) : std::string(); }

}  // namespace disttune::detail
