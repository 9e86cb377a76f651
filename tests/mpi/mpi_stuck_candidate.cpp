// A tuning in which one rank never returns from a candidate: the other ranks must end the
// job with an error naming the phase, key, candidate and that rank, soon after the deadline.
// Usage: mpi_stuck_candidate <stuck rank>. The deadline is TRITON_DIST_AUTOTUNE_TIMEOUT seconds.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "disttune/autotune.hpp"
#include "disttune/mpi.hpp"
#include "test_mark.hpp"

namespace {

struct Config {
  int id = 0;
};
disttune::Value describe(const Config& config) { return disttune::Value{{"id", config.id}}; }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <stuck rank>\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int stuck = std::atoi(argv[1]);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    disttune::Autotuned<Config, int, int(int)>::Spec spec;
    spec.identity = {"stuck_candidate", "test-v1"};
    spec.configs = {Config{0}, Config{1}, Config{2}};
    spec.key = [](const int& n) { return n; };
    spec.launch = [&](const Config& config, int n) {
      if (config.id == 1 && rank == stuck) std::this_thread::sleep_for(std::chrono::hours(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return n + config.id;
    };
    spec.options.measurement.warmup_runs = 1;
    spec.options.measurement.timed_runs = 3;
    spec.options.measurement.strategy = "exhaustive";
    spec.options.disk_cache = false;
    spec.options.communicator = disttune::make_mpi_communicator();
    disttune::Autotuned<Config, int, int(int)> tuned(std::move(spec));
    disttune::test::print_mark();  // the stuck barrier's deadline runs from within this tuning
    tuned(5);
    std::fprintf(stderr, "rank %d finished a tuning in which rank %d never returned\n", rank, stuck);
  }
  MPI_Finalize();
  return 0;
}
