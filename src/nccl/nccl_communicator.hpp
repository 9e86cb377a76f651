// NcclCommunicator: the Communicator over a caller's NCCL communicator and stream, polled
// against deadlines, with scratch device memory from the CUDA driver API.
#pragma once

#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "communicators/fixed_group_communicator.hpp"
#include "cuda_driver/driver_resources.hpp"
#include "disttune/communicator.hpp"
#include "disttune/roll_call.hpp"

namespace disttune::detail {

/// See make_nccl_communicator() in disttune/nccl.hpp for the promises.
class NcclCommunicator final : public FixedGroupCommunicator {
 public:
  /// Not collective unless `local_rank` is absent (then it gathers host names).
  NcclCommunicator(ncclComm_t comm, CUstream stream, std::optional<int> local_rank,
                   std::shared_ptr<RankRollCall> roll_call);

  void barrier(const CollectiveContext& context) override;
  void all_reduce_max(std::span<double> values, const CollectiveContext& context) override;
  std::vector<std::string> all_gather(const std::string& bytes,
                                      const CollectiveContext& context) override;

 private:
  using Clock = std::chrono::steady_clock;

  /// What one call is doing, for its error messages and the roll call.
  struct Call {
    const CollectiveContext& context;
    CollectivePosition position;
  };

  Call begin(const CollectiveContext& context);
  /// Device scratch memory of at least `bytes` (kept between calls; the stream is idle).
  CUdeviceptr scratch(std::size_t bytes);
  /// Polls until NCCL has enqueued everything and the stream is idle; `what` names what is
  /// awaited in the error if the deadline passes first.
  void wait(const Call& call, const char* what);
  /// Answers the roll call's queries, if there is one (a failure is kept for the error).
  void answer_roll_call(const Call& call);
  /// The error's lines naming the ranks missing from `call`, from the roll call if there is one.
  std::string missing_ranks(const Call& call);
  void upload(CUdeviceptr device, const void* host, std::size_t bytes);
  /// Waits for the stream, then copies `bytes` back to the host.
  void download(const Call& call, void* host, CUdeviceptr device, std::size_t bytes);
  void enqueued(ncclResult_t result, const char* operation);
  /// Aborts the NCCL communicator and throws `error` (its type is kept).
  template <class Error>
  [[noreturn]] void abort_with(const Error& error);
  std::vector<std::string> gather_parts(const std::string& bytes, const CollectiveContext& context);

  ncclComm_t comm_;
  CUstream stream_;
  PrimaryContext device_context_;
  CUcontext stream_context_ = nullptr;
  std::optional<DeviceBuffer> scratch_;
  std::shared_ptr<RankRollCall> roll_call_;  ///< names the missing ranks when a call is late; may be null
  std::string roll_call_failure_;            ///< why the roll call stopped working, if it did
  std::uint64_t sequence_ = 0;               ///< collectives begun, the same count on every rank
  bool aborted_ = false;
  std::mutex mutex_;  // one collective at a time
};

}  // namespace disttune::detail
