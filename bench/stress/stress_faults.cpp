// One multi-rank fault per run, for the stress driver (run_stress.py): each mode sets up a
// fault, tunes through Autotuned over the MPI communicator and prints what happened.
// Usage: stress_faults <mode> <cache dir>. Modes:
//   stuck-last, stuck-first  a rank (last or 0) never returns from candidate 1: the job must end
//                            with a timeout error naming that rank (exit code != 0)
//   divergent-prune          rank 1 prunes a config the others keep: RankDisagreement everywhere
//   fails-on-one-rank        config 0 throws on the last rank only: config 1 chosen everywhere
//   record-on-one-rank       only rank 0 has a stored record: every rank tunes, config 1 chosen
//   max-rule                 config 0 fast on rank 0 only, config 2 on the others only: config 1
//   rank-exits               the last rank exits in the middle of a tuning: the job must end
// Each rank prints "OUTCOME rank=<r> <what>"; the driver checks them.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "disttune/autotune.hpp"
#include "disttune/mpi.hpp"

namespace {

struct Config {
  int id = 0;
};
disttune::Value describe(const Config& config) { return disttune::Value{{"id", config.id}}; }

using Tuned = disttune::Autotuned<Config, int, int(int)>;
using CostModel = std::function<double(int config, int rank)>;

struct Setup {
  CostModel cost = [](int, int) { return 1.0; };
  std::function<bool(int config)> prune_here;  ///< keep config? on this rank
  std::function<void(int config)> before_run;  ///< the fault, if any
};

Tuned make(const Setup& setup, std::shared_ptr<disttune::Communicator> comm,
           const std::filesystem::path& root, int rank) {
  Tuned::Spec spec;
  spec.identity = {"stress", "stress-v1"};
  spec.configs = {Config{0}, Config{1}, Config{2}};
  spec.key = [](const int& key) { return key; };
  if (setup.prune_here) {
    spec.prune = [prune = setup.prune_here](const Config& config, const int&) { return prune(config.id); };
  }
  spec.launch = [setup, rank](const Config& config, int key) {
    if (setup.before_run) setup.before_run(config.id);
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(setup.cost(config.id, rank)));
    return key * 10 + config.id;
  };
  spec.options.measurement.warmup_runs = 1;
  spec.options.measurement.timed_runs = 5;
  spec.options.communicator = std::move(comm);
  spec.options.cache_root = root;
  return Tuned(std::move(spec));
}

void outcome(int rank, const std::string& what) {
  std::printf("OUTCOME rank=%d %s\n", rank, what.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3) {
    if (rank == 0) std::fprintf(stderr, "usage: %s <mode> <cache dir>\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string mode = argv[1];
  const std::filesystem::path root = std::filesystem::path(argv[2]) / ("rank" + std::to_string(rank));
  const int last = size - 1;
  std::shared_ptr<disttune::Communicator> comm = disttune::make_mpi_communicator();
  Setup setup;
  if (mode == "stuck-last" || mode == "stuck-first") {
    const int stuck = mode == "stuck-last" ? last : 0;
    setup.before_run = [rank, stuck](int config) {
      if (config == 1 && rank == stuck) std::this_thread::sleep_for(std::chrono::hours(1));
    };
  } else if (mode == "rank-exits") {
    setup.before_run = [rank, last](int config) {
      if (config == 1 && rank == last) std::_Exit(1);
    };
  } else if (mode == "divergent-prune") {
    setup.prune_here = [rank](int config) { return !(rank == 1 && config == 2); };
  } else if (mode == "fails-on-one-rank") {
    setup.cost = [](int config, int) { return config == 0 ? 1.0 : config == 1 ? 4.0 : 25.0; };
    setup.before_run = [rank, last](int config) {
      if (config == 0 && rank == last) throw std::runtime_error("broken on the last rank");
    };
  } else if (mode == "record-on-one-rank") {
    if (rank == 0) {
      Setup alone;
      alone.cost = [](int config, int) { return config == 2 ? 1.0 : 15.0; };
      Tuned tuned = make(alone, std::make_shared<disttune::SingleProcessCommunicator>(), root, rank);
      tuned(1);
    }
    setup.cost = [](int config, int) { return config == 1 ? 1.0 : 15.0; };
  } else if (mode == "max-rule") {
    setup.cost = [](int config, int r) {
      if (config == 1) return 5.0;
      return (config == 0) == (r == 0) ? 1.0 : 25.0;
    };
  } else {
    if (rank == 0) std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  try {
    Tuned tuned = make(setup, comm, root, rank);
    const int result = tuned(1);
    outcome(rank, "chose=" + std::to_string(result % 10));
  } catch (const disttune::RankDisagreement& error) {
    outcome(rank, "rank-disagreement");
  } catch (const std::exception& error) {
    outcome(rank, std::string("error=") + error.what());
  }
  comm.reset();
  MPI_Finalize();
  return 0;
}
