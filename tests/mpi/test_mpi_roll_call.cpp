// The MPI roll call that names the ranks missing from a late NCCL collective
// (make_mpi_roll_call), run under mpirun with 2, 3 and 4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <string>
#include <thread>

#include "disttune/mpi.hpp"
#include "mpi_test_support.hpp"

namespace disttune {
namespace {

using Clock = std::chrono::steady_clock;
using test::world_rank;
using test::world_size;

/// Answers the roll call at `position` until `survey_over` completes.
void answer_until(RankRollCall& roll_call, const CollectivePosition& position, MPI_Request& survey_over) {
  for (int over = 0; !over;) {
    roll_call.answer(position);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    MPI_Test(&survey_over, &over, MPI_STATUS_IGNORE);
  }
}

TEST(MpiRollCall, NamesTheRankThatDoesNotAnswerAndWhereTheOthersWait) {
  auto roll_call = make_mpi_roll_call(MPI_COMM_WORLD);
  const int rank = world_rank();
  const int last = world_size() - 1;
  // Rank 0 waits in collective #4; the middle ranks in #4 too, except rank 1 (of 3 or
  // more), which is one collective behind, in #3; the last rank is busy elsewhere.
  const CollectivePosition here{4, "phase 'barrier before timed runs'", Clock::now()};
  const CollectivePosition behind{3, "phase 'reduce'", Clock::now()};
  // Rank 0 joins this barrier once it has surveyed: the others answer (or stay away) until
  // then, not for a fixed time that a loaded machine could take rank 0 to get there.
  MPI_Request survey_over = MPI_REQUEST_NULL;
  if (rank == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::string lines = roll_call->survey(here);
    EXPECT_NE(lines.find("ranks that did not arrive: " + std::to_string(last) + " "),
              std::string::npos)
        << lines;
    std::string waiting_here = "0";
    for (int other = 2; other < last; ++other) waiting_here += ", " + std::to_string(other);
    EXPECT_TRUE(lines.ends_with("ranks waiting in this collective: " + waiting_here)) << lines;
    if (world_size() > 2) {
      EXPECT_NE(lines.find("rank 1 waits in another collective (#3, phase 'reduce')"),
                std::string::npos)
          << lines;
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &survey_over);
    MPI_Wait(&survey_over, MPI_STATUS_IGNORE);
  } else if (rank != last) {
    MPI_Ibarrier(MPI_COMM_WORLD, &survey_over);
    answer_until(*roll_call, rank == 1 ? behind : here, survey_over);
  } else {
    MPI_Ibarrier(MPI_COMM_WORLD, &survey_over);  // busy elsewhere: never answers the roll call
    MPI_Wait(&survey_over, MPI_STATUS_IGNORE);
  }
}

}  // namespace
}  // namespace disttune
