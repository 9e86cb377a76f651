// MpiCommunicator: the Communicator over MPI non-blocking collectives, polled against deadlines.
#include "mpi/mpi_communicator.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "disttune/mpi.hpp"
#include "mpi/comm_handle.hpp"
#include "mpi/mpi_check.hpp"
#include "util/number_text.hpp"

namespace disttune::detail {
namespace {

using Clock = std::chrono::steady_clock;

int checked_count(std::size_t count, const char* what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw std::length_error(std::string("disttune: ") + what + " of " + std::to_string(count) +
                            " elements is more than one MPI call can move");
  }
  return static_cast<int>(count);
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm)
    : collectives_(OwnedComm::duplicate(comm)),
      control_(OwnedComm::duplicate(comm)),
      roll_call_(control_.get()) {
  rank_ = collectives_.rank();
  size_ = collectives_.size();
  local_rank_ = OwnedComm::split_by_node(comm).rank();  // collective, after the duplicates
}

CollectivePosition MpiCommunicator::begin(const CollectiveContext& context) {
  return CollectivePosition{++sequence_, context.describe(), Clock::now()};
}

void MpiCommunicator::wait(MPI_Request& request, const CollectivePosition& waiting,
                           Clock::time_point deadline) {
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    roll_call_.answer_queries(waiting);
    if (Clock::now() >= deadline) abort_late(waiting);
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(1));
  }
}

void MpiCommunicator::abort_late(const CollectivePosition& waiting) {
  const double waited = std::chrono::duration<double>(Clock::now() - waiting.since).count();
  const std::string survey = describe_survey(roll_call_.survey(waiting, kRollCallGrace), waiting.sequence,
                                             kRollCallGrace);
  std::ostringstream message;
  message << "disttune: error: collective #" << waiting.sequence << " timed out on rank " << rank_
          << " of " << size_ << " after " << seconds_with_unit(waited) << ": " << waiting.where << "." << survey;
  message << "\ndisttune:   ending the job: MPI_Abort with exit code " << kMpiTimeoutExitCode
          << " (set the deadline with TRITON_DIST_AUTOTUNE_TIMEOUT, seconds)\n";
  const std::string text = message.str();
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
  MPI_Abort(collectives_.get(), kMpiTimeoutExitCode);
  std::abort();  // MPI_Abort does not return; if it ever does, the job must still end
}

void MpiCommunicator::barrier(const CollectiveContext& context) {
  std::lock_guard lock(mutex_);
  const CollectivePosition waiting = begin(context);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(collectives_.get(), &request), "MPI_Ibarrier");
  wait(request, waiting, context.deadline);
}

void MpiCommunicator::all_reduce_max(std::span<double> values, const CollectiveContext& context) {
  std::lock_guard lock(mutex_);
  const int count = checked_count(values.size(), "an all-reduce");
  const CollectivePosition waiting = begin(context);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values.data(), count, MPI_DOUBLE, MPI_MAX, collectives_.get(),
                           &request),
            "MPI_Iallreduce");
  wait(request, waiting, context.deadline);
}

std::vector<std::string> MpiCommunicator::all_gather(const std::string& bytes,
                                                     const CollectiveContext& context) {
  std::lock_guard lock(mutex_);
  const CollectivePosition waiting = begin(context);
  const std::uint64_t length = bytes.size();
  std::vector<std::uint64_t> lengths(static_cast<std::size_t>(size_));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&length, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T,
                           collectives_.get(), &request),
            "MPI_Iallgather");
  wait(request, waiting, context.deadline);

  std::vector<int> counts(lengths.size());
  std::vector<int> offsets(lengths.size());
  std::size_t total = 0;
  for (std::size_t rank = 0; rank < lengths.size(); ++rank) {
    counts[rank] = checked_count(lengths[rank], "an all-gather part");
    offsets[rank] = checked_count(total, "an all-gather");
    total += lengths[rank];
  }
  (void)checked_count(total, "an all-gather");
  std::string gathered(total, '\0');
  check_mpi(MPI_Iallgatherv(bytes.data(), counts[static_cast<std::size_t>(rank_)], MPI_CHAR,
                            gathered.data(), counts.data(), offsets.data(), MPI_CHAR,
                            collectives_.get(), &request),
            "MPI_Iallgatherv");
  wait(request, waiting, context.deadline);

  std::vector<std::string> parts;
  parts.reserve(lengths.size());
  for (std::size_t rank = 0; rank < lengths.size(); ++rank) {
    parts.push_back(gathered.substr(static_cast<std::size_t>(offsets[rank]), lengths[rank]));
  }
  return parts;
}

}  // namespace disttune::detail

namespace disttune {

std::unique_ptr<Communicator> detail::make_mpi_communicator_from_handle(const void* comm_handle,
                                                                        std::size_t handle_size) {
  const MPI_Comm comm = comm_from_handle(comm_handle, handle_size, "make_mpi_communicator");
  return std::make_unique<MpiCommunicator>(comm);
}

std::unique_ptr<Communicator> make_mpi_communicator() {
  MPI_Comm world = MPI_COMM_WORLD;
  return detail::make_mpi_communicator_from_handle(&world, sizeof world);
}

}  // namespace disttune
