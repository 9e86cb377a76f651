// NcclCommunicator: the Communicator over a caller's NCCL communicator and stream, polled
// against deadlines, with scratch device memory from the CUDA driver API.
#include "nccl/nccl_communicator.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <utility>

#include "disttune/nccl.hpp"
#include "nccl/nccl_check.hpp"
#include "util/number_text.hpp"

namespace disttune::detail {
namespace {

/// The CUDA device an NCCL communicator runs on.
CUdevice device_of(ncclComm_t comm) {
  int ordinal = 0;
  check_nccl(ncclCommCuDevice(comm, &ordinal), "ncclCommCuDevice", comm);
  CUdevice device = 0;
  check(driver().cuDeviceGet(&device, ordinal), "cuDeviceGet");
  return device;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) throw std::runtime_error("disttune: gethostname failed");
  return name;
}

}  // namespace

NcclCommunicator::NcclCommunicator(ncclComm_t comm, CUstream stream, std::optional<int> local_rank,
                                   std::shared_ptr<RankRollCall> roll_call)
    : comm_(comm), stream_(stream), device_context_(device_of(comm)), roll_call_(std::move(roll_call)) {
  check_nccl(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank", comm_);
  check_nccl(ncclCommCount(comm_, &size_), "ncclCommCount", comm_);
  stream_context_ = device_context_.get();
  if (stream_ != nullptr) check(driver().cuStreamGetCtx(stream_, &stream_context_), "cuStreamGetCtx");
  if (local_rank) {
    if (*local_rank < 0 || *local_rank >= size_) {
      throw std::invalid_argument("disttune: local rank " + std::to_string(*local_rank) +
                                  " is outside [0, " + std::to_string(size_) + ")");
    }
    local_rank_ = *local_rank;
    return;
  }
  const CollectiveContext context{"local rank", "", "", std::nullopt,
                                  deadline_after(default_collective_timeout())};
  const std::vector<std::string> hosts = all_gather(host_name(), context);
  local_rank_ = static_cast<int>(std::count(hosts.begin(), hosts.begin() + rank_, hosts[rank_]));
}

NcclCommunicator::Call NcclCommunicator::begin(const CollectiveContext& context) {
  if (aborted_) {
    throw std::logic_error("disttune: the NCCL communicator was aborted after an earlier error; "
                           "it cannot run " + context.describe());
  }
  return Call{context, CollectivePosition{++sequence_, context.describe(), Clock::now()}};
}

template <class Error>
void NcclCommunicator::abort_with(const Error& error) {
  aborted_ = true;
  // ncclCommAbort frees device memory, which waits for work still running on the device
  // (forever, if a kernel is stuck): it runs on a thread of its own so the error is raised
  // at the deadline, not when the device is done.
  std::thread([comm = comm_] { ncclCommAbort(comm); }).detach();
  throw error;
}

CUdeviceptr NcclCommunicator::scratch(std::size_t bytes) {
  if (!scratch_ || scratch_->bytes() < bytes) {
    const std::size_t grown = std::max<std::size_t>({bytes, 4096, scratch_ ? 2 * scratch_->bytes() : 0});
    scratch_.reset();
    scratch_.emplace(device_context_.device(), grown);
  }
  return scratch_->get();
}

void NcclCommunicator::answer_roll_call(const Call& call) {
  if (!roll_call_ || !roll_call_failure_.empty()) return;
  try {
    roll_call_->answer(call.position);
  } catch (const std::exception& error) {
    roll_call_failure_ = error.what();  // the deadline still holds; the error will say why no names
  }
}

std::string NcclCommunicator::missing_ranks(const Call& call) {
  if (!roll_call_) {
    return " NCCL cannot tell which ranks did not arrive (a RankRollCall passed to "
           "make_nccl_communicator names them).";
  }
  if (roll_call_failure_.empty()) {
    try {
      return roll_call_->survey(call.position);
    } catch (const std::exception& error) {
      roll_call_failure_ = error.what();
    }
  }
  return "\ndisttune:   the ranks that did not arrive are unknown: the roll call failed: " + roll_call_failure_;
}

void NcclCommunicator::wait(const Call& call, const char* what) {
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    ncclResult_t state = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError", comm_);
    if (state != ncclSuccess && state != ncclInProgress) {
      std::string reason = ncclGetErrorString(state);
      if (const char* last = ncclGetLastError(comm_); last != nullptr && *last != '\0') {
        reason += ": " + std::string(last);
      }
      abort_with(std::runtime_error("disttune: error: NCCL failed on rank " + std::to_string(rank_) +
                                    " of " + std::to_string(size_) + " in " +
                                    call.context.describe() + ": " + reason + "." + missing_ranks(call) +
                                    "\ndisttune:   the NCCL communicator was aborted"));
    }
    if (state == ncclSuccess) {
      const CUresult result = driver().cuStreamQuery(stream_);
      if (result == CUDA_SUCCESS) return;
      if (result != CUDA_ERROR_NOT_READY) {
        abort_with(std::runtime_error("disttune: error: " + describe_error(result, "cuStreamQuery") +
                                      " in " + call.context.describe() +
                                      "; the NCCL communicator was aborted"));
      }
    }
    answer_roll_call(call);
    if (Clock::now() >= call.context.deadline) {
      const double waited = std::chrono::duration<double>(Clock::now() - call.position.since).count();
      abort_with(CollectiveTimeout(
          "disttune: error: collective #" + std::to_string(call.position.sequence) + " timed out on rank " +
          std::to_string(rank_) + " of " + std::to_string(size_) + " after " + seconds_with_unit(waited) + ": " +
          call.context.describe() + "; waiting for " + what + "." + missing_ranks(call) +
          "\ndisttune:   the NCCL communicator was aborted (ncclCommAbort). Set the deadline with "
          "TRITON_DIST_AUTOTUNE_TIMEOUT (seconds)."));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(1));
  }
}

void NcclCommunicator::upload(CUdeviceptr device, const void* host, std::size_t bytes) {
  if (bytes == 0) return;
  check(driver().cuMemcpyHtoDAsync(device, host, bytes, stream_), "cuMemcpyHtoDAsync");
}

void NcclCommunicator::download(const Call& call, void* host, CUdeviceptr device, std::size_t bytes) {
  wait(call, "the NCCL operation (every rank must reach it)");
  if (bytes == 0) return;
  check(driver().cuMemcpyDtoHAsync(host, device, bytes, stream_), "cuMemcpyDtoHAsync");
  wait(call, "the copy of the result to the host");
}

void NcclCommunicator::enqueued(ncclResult_t result, const char* operation) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  std::string reason = ncclGetErrorString(result);
  if (const char* last = ncclGetLastError(comm_); last != nullptr && *last != '\0') {
    reason += ": " + std::string(last);
  }
  abort_with(std::runtime_error(std::string("disttune: error: ") + operation + " failed on rank " +
                                std::to_string(rank_) + ": " + reason +
                                "; the NCCL communicator was aborted"));
}

void NcclCommunicator::barrier(const CollectiveContext& context) {
  std::lock_guard lock(mutex_);
  const Call call = begin(context);
  ContextGuard current(stream_context_);
  wait(call, "this rank's own work queued on the stream before the collective");
  const CUdeviceptr token = scratch(sizeof(double));
  enqueued(ncclAllReduce(reinterpret_cast<void*>(token), reinterpret_cast<void*>(token), 1,
                         ncclDouble, ncclSum, comm_, stream_),
           "ncclAllReduce");
  wait(call, "the NCCL operation (every rank must reach it)");
}

void NcclCommunicator::all_reduce_max(std::span<double> values, const CollectiveContext& context) {
  std::lock_guard lock(mutex_);
  const Call call = begin(context);
  if (values.empty()) return;  // every rank passes the same length
  ContextGuard current(stream_context_);
  wait(call, "this rank's own work queued on the stream before the collective");
  const std::size_t bytes = values.size_bytes();
  const CUdeviceptr buffer = scratch(bytes);
  upload(buffer, values.data(), bytes);
  enqueued(ncclAllReduce(reinterpret_cast<void*>(buffer), reinterpret_cast<void*>(buffer),
                         values.size(), ncclDouble, ncclMax, comm_, stream_),
           "ncclAllReduce");
  download(call, values.data(), buffer, bytes);
}

std::vector<std::string> NcclCommunicator::all_gather(const std::string& bytes,
                                                      const CollectiveContext& context) {
  std::lock_guard lock(mutex_);
  return gather_parts(bytes, context);
}

std::vector<std::string> NcclCommunicator::gather_parts(const std::string& bytes,
                                                        const CollectiveContext& context) {
  const Call call = begin(context);
  ContextGuard current(stream_context_);
  wait(call, "this rank's own work queued on the stream before the collective");
  const auto ranks = static_cast<std::size_t>(size_);
  const auto me = static_cast<std::size_t>(rank_);

  // The lengths first, so that every rank can pad its part to the longest.
  const std::uint64_t length = bytes.size();
  std::vector<std::uint64_t> lengths(ranks);
  CUdeviceptr buffer = scratch(ranks * sizeof(std::uint64_t));
  upload(buffer + me * sizeof(std::uint64_t), &length, sizeof length);
  enqueued(ncclAllGather(reinterpret_cast<void*>(buffer + me * sizeof(std::uint64_t)),
                         reinterpret_cast<void*>(buffer), 1, ncclUint64, comm_, stream_),
           "ncclAllGather");
  download(call, lengths.data(), buffer, ranks * sizeof(std::uint64_t));

  const std::size_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<std::string> parts(ranks);
  if (longest == 0) return parts;
  buffer = scratch(ranks * longest);
  upload(buffer + me * longest, bytes.data(), bytes.size());
  enqueued(ncclAllGather(reinterpret_cast<void*>(buffer + me * longest),
                         reinterpret_cast<void*>(buffer), longest, ncclUint8, comm_, stream_),
           "ncclAllGather");
  std::string padded(ranks * longest, '\0');
  download(call, padded.data(), buffer, padded.size());
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    parts[rank] = padded.substr(rank * longest, lengths[rank]);
  }
  return parts;
}

}  // namespace disttune::detail

namespace disttune {

std::unique_ptr<Communicator> make_nccl_communicator(void* nccl_comm, void* stream,
                                                     std::optional<int> local_rank,
                                                     std::shared_ptr<RankRollCall> roll_call) {
  if (nccl_comm == nullptr) throw std::invalid_argument("disttune: make_nccl_communicator got a null ncclComm_t");
  return std::make_unique<detail::NcclCommunicator>(static_cast<ncclComm_t>(nccl_comm),
                                                    static_cast<CUstream>(stream), local_rank,
                                                    std::move(roll_call));
}

}  // namespace disttune
