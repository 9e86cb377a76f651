// The MPI communicator's collectives, run under mpirun with 2, 3 and 4 ranks.
#include <mpi.h>

#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/mpi.hpp"
#include "mpi_test_support.hpp"

namespace disttune {
namespace {

using test::test_context;
using test::world_rank;
using test::world_size;

TEST(MpiCommunicator, RankSizeAndLocalRankFollowTheWorld) {
  auto comm = make_mpi_communicator();
  EXPECT_EQ(comm->rank(), world_rank());
  EXPECT_EQ(comm->size(), world_size());
  // The CI runs every rank on one node, so the rank within the node is the world rank.
  EXPECT_EQ(comm->local_rank(), world_rank());
}

TEST(MpiCommunicator, BarrierWaitsForTheLastRank) {
  test::SharedTempDir dir;
  auto comm = make_mpi_communicator();
  const auto marker = dir.path() / "rank0-was-here";
  if (comm->rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ofstream(marker) << "x";
  }
  comm->barrier(test_context("barrier"));
  EXPECT_TRUE(std::filesystem::exists(marker)) << "the barrier let rank " << comm->rank()
                                               << " through before rank 0 arrived";
}

TEST(MpiCommunicator, AllReduceTakesTheMaximumPerElement) {
  auto comm = make_mpi_communicator();
  const int rank = comm->rank();
  const int size = comm->size();
  const double inf = std::numeric_limits<double>::infinity();
  // Element 0 grows with the rank, element 1 shrinks, element 2 is +inf on the last rank.
  std::array<double, 3> maxima{double(rank), double(-rank), rank == size - 1 ? inf : 1.5};
  comm->all_reduce_max(maxima, test_context("max"));
  EXPECT_EQ(maxima[0], double(size - 1));
  EXPECT_EQ(maxima[1], 0.0);
  EXPECT_EQ(maxima[2], inf);
}

TEST(MpiCommunicator, AllReduceOfNothingIsACollectiveNoOp) {
  auto comm = make_mpi_communicator();
  std::vector<double> none;
  comm->all_reduce_max(none, test_context("empty max"));
  comm->barrier(test_context("after"));
  EXPECT_TRUE(none.empty());
}

/// Rank r's bytes: r*5 bytes (rank 0 sends none), including zero bytes.
std::string bytes_of(int rank) {
  std::string bytes;
  for (int i = 0; i < rank * 5; ++i) bytes.push_back(static_cast<char>((rank * 31 + i) % 7));
  return bytes;
}

TEST(MpiCommunicator, AllGatherReturnsEveryRanksBytesInRankOrder) {
  auto comm = make_mpi_communicator();
  const std::vector<std::string> gathered = comm->all_gather(bytes_of(comm->rank()),
                                                             test_context("all-gather"));
  ASSERT_EQ(gathered.size(), static_cast<std::size_t>(comm->size()));
  for (int rank = 0; rank < comm->size(); ++rank) {
    EXPECT_EQ(gathered[static_cast<std::size_t>(rank)], bytes_of(rank)) << "part of rank " << rank;
  }
}

TEST(MpiCommunicator, WorksOnACallersSubCommunicator) {
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, world_rank(), &half), MPI_SUCCESS);
  {
    auto comm = make_mpi_communicator(half);
    const int expected_size = (world_size() + 1 - world_rank() % 2) / 2;
    EXPECT_EQ(comm->size(), expected_size);
    EXPECT_EQ(comm->rank(), world_rank() / 2);
    const auto gathered = comm->all_gather(std::to_string(world_rank()), test_context("half"));
    for (int rank = 0; rank < comm->size(); ++rank) {
      EXPECT_EQ(gathered[static_cast<std::size_t>(rank)], std::to_string(2 * rank + world_rank() % 2));
    }
  }
  MPI_Comm_free(&half);
}

TEST(MpiCommunicator, ItsTrafficNeverMatchesTheCallersReceives) {
  // A receive posted by the caller for any source and tag on the same communicator.
  int slot = 0;
  MPI_Request callers_receive = MPI_REQUEST_NULL;
  MPI_Irecv(&slot, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &callers_receive);
  {
    auto comm = make_mpi_communicator();
    std::array<double, 2> values{1.0, 2.0};
    comm->all_reduce_max(values, test_context("max"));
    (void)comm->all_gather("abc", test_context("gather"));
    comm->barrier(test_context("barrier"));
  }
  int matched = 1;
  MPI_Test(&callers_receive, &matched, MPI_STATUS_IGNORE);
  EXPECT_EQ(matched, 0) << "a disttune message reached the caller's receive";
  MPI_Cancel(&callers_receive);
  MPI_Wait(&callers_receive, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(MpiCommunicator, ASlowRankWithinTheDeadlineIsWaitedFor) {
  auto comm = make_mpi_communicator();
  if (comm->rank() == comm->size() - 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CollectiveContext context = test_context("slow but in time");
  context.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::array<double, 1> value{double(comm->rank())};
  comm->all_reduce_max(value, context);
  EXPECT_EQ(value[0], double(comm->size() - 1));
}

TEST(MpiCommunicator, RejectsAHandleThatIsNotAnMpiComm) {
  std::array<char, sizeof(MPI_Comm) + 1> not_a_comm{};
  EXPECT_THROW((void)make_mpi_communicator(not_a_comm), std::invalid_argument);
  EXPECT_THROW((void)make_mpi_communicator(MPI_COMM_NULL), std::invalid_argument);
}

}  // namespace
}  // namespace disttune
