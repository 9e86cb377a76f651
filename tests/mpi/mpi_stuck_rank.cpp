// A job in which one rank never reaches a barrier: the others must end it with a clear error.
// Usage: mpi_stuck_rank <stuck rank>. The deadline is TRITON_DIST_AUTOTUNE_TIMEOUT seconds.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "disttune/mpi.hpp"
#include "test_mark.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <stuck rank>\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int stuck = std::atoi(argv[1]);
  auto comm = disttune::make_mpi_communicator();
  const auto context = [](const char* phase) {
    return disttune::CollectiveContext{phase, "stuck_test", "[7]", 2,
                                       disttune::deadline_after(disttune::default_collective_timeout())};
  };
  (void)comm->all_gather("hello", context("greeting"));  // every rank takes part in this one
  disttune::test::print_mark();                             // the barrier's deadline runs from here
  if (comm->rank() == stuck) {
    std::this_thread::sleep_for(std::chrono::hours(1));  // busy elsewhere, never arrives
  }
  comm->barrier(context("barrier before timed runs"));
  std::fprintf(stderr, "rank %d passed a barrier that rank %d never reached\n", comm->rank(), stuck);
  comm.reset();
  MPI_Finalize();
  return 0;
}
