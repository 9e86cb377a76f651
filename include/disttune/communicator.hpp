// The Communicator seam: the collectives a multi-rank tuning needs, each with a deadline.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "disttune/deadline.hpp"
#include "disttune/error.hpp"

namespace disttune {

/// Where a collective is in a tuning, for error messages, and when it must finish by.
struct CollectiveContext {
  std::string phase;                     ///< "cache vote", "digest check", "barrier", "reduce", ...
  std::string function;                  ///< tuned function or kernel
  std::string key;                       ///< canonical key text
  std::optional<std::size_t> candidate;  ///< candidate index, when the phase has one
  std::chrono::steady_clock::time_point deadline;
  /// "phase 'barrier' of function 'scale', key [1024], candidate 3"
  std::string describe() const;
};

/// A collective did not complete before its deadline. what() names the phase, function,
/// key, candidate and, where the backend can tell, the ranks that did not arrive.
class CollectiveTimeout : public ErrorAs<std::runtime_error> {
 public:
  using ErrorAs::ErrorAs;
};

/// Ranks disagree on something they must agree on (candidate list, key, settings).
class RankDisagreement : public ErrorAs<std::runtime_error> {
 public:
  using ErrorAs::ErrorAs;
};

/// Collectives over a fixed group of ranks. Every call is collective: each rank of the
/// group makes the same calls in the same order. Each call throws CollectiveTimeout
/// (or ends the job, where the backend cannot recover) if it misses its deadline.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Rank within this node; local rank 0 writes the node's disk records.
  virtual int local_rank() const = 0;
  virtual void barrier(const CollectiveContext& context) = 0;
  /// Element-wise maximum across ranks, in place.
  virtual void all_reduce_max(std::span<double> values, const CollectiveContext& context) = 0;
  /// Every rank's bytes, indexed by rank.
  virtual std::vector<std::string> all_gather(const std::string& bytes,
                                              const CollectiveContext& context) = 0;
};

/// One rank alone: every collective returns at once.
class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  void barrier(const CollectiveContext&) override {}
  void all_reduce_max(std::span<double>, const CollectiveContext&) override {}
  std::vector<std::string> all_gather(const std::string& bytes,
                                      const CollectiveContext&) override {
    return {bytes};
  }
};

/// The collectives as callbacks, for a caller's own transport (e.g. a torch ProcessGroup).
/// Each callback receives the context and must honour its deadline.
struct CommunicatorCallbacks {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  std::function<void(const CollectiveContext&)> barrier;
  std::function<void(std::span<double>, const CollectiveContext&)> all_reduce_max;
  std::function<std::vector<std::string>(const std::string&, const CollectiveContext&)> all_gather;
};

/// A Communicator over caller-supplied callbacks; throws std::invalid_argument if one is missing.
std::unique_ptr<Communicator> make_callback_communicator(CommunicatorCallbacks callbacks);

/// The default timeout of one engine collective: collective_timeout_setting() (settings.hpp):
/// TRITON_DIST_AUTOTUNE_TIMEOUT seconds, `inf`/`none` for kNoDeadline, else 10 minutes; a
/// bad value throws InvalidSetting. Make deadlines from it with deadline_after() (deadline.hpp).
std::chrono::milliseconds default_collective_timeout();

}  // namespace disttune
