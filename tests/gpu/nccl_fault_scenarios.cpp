// The multi-GPU scenarios of issue 17 through disttune::nccl, one GPU per rank under mpirun:
// the MAX rule, a record on some ranks only, a divergent prune, a config failing on one rank,
// and a rank killed (SIGKILL) or hung inside a launcher, which every other rank must name
// within the deadline + 5 s. Usage: mpirun -np N nccl_fault_scenarios <scenario> <dir>
// (<dir>: a fresh directory for the ranks' caches and the fault's time). Each rank prints
// "rank R: <scenario>: PASS|FAIL ..."; the fault scenarios end the job with MPI_Abort(3).
#include <mpi.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "disttune/autotune.hpp"
#include "disttune/cuda.hpp"
#include "disttune/mpi.hpp"
#include "disttune/nccl.hpp"
#include "gpu_kernels.hpp"
#include "nccl_world.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

struct Config {
  int id = 0;
};
disttune::Value describe(const Config& config) {
  return disttune::Value{{"id", config.id}};
}

using Tuned = disttune::Autotuned<Config, int, void(int)>;
/// Device time (ms) of config `id` on rank `rank`.
using Cost = std::function<double(int id, int rank)>;

/// One rank's view of the job: its place, GPU, stream, and the engine's communicator.
struct Job {
  Job(nccl_world::MpiRank rank, fs::path scratch) : me(rank), dir(std::move(scratch)) {}

  nccl_world::MpiRank me;
  fs::path dir;
  nccl_world::Stream stream;
  std::unique_ptr<nccl_world::NcclComm> nccl;
  std::shared_ptr<disttune::Communicator> ranks;
  disttune::gpu_test::DeviceArray<unsigned long long> spun{1};
  int last() const { return me.size - 1; }
};

/// Spins this rank's GPU for `ms` milliseconds at the rated clock.
void spin(Job& job, double ms) {
  int device = 0;
  int khz = 0;
  nccl_world::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  nccl_world::check_cuda(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device),
                         "cudaDeviceGetAttribute");
  disttune::gpu_test::launch_spin(static_cast<long long>(khz * ms), job.spun.get(),
                                  job.stream.get());
}

/// Three configs whose device times follow `cost`; `before_launch` runs first (a fault).
/// `disk`: records go to this rank's own cache directory.
Tuned make_tuned(Job& job, const std::string& name, Cost cost,
                 std::shared_ptr<disttune::Communicator> ranks, bool disk = false,
                 std::function<void(int id)> before_launch = {},
                 std::function<bool(const Config&, const int&)> prune = {}) {
  Tuned::Spec spec;
  spec.identity = {name, "nccl-fault-scenarios-v1"};
  spec.configs = {Config{0}, Config{1}, Config{2}};
  spec.key = [](const int& key) { return key; };
  spec.prune = std::move(prune);
  spec.launch = [&job, cost, before_launch](const Config& config, int) {
    if (before_launch) before_launch(config.id);
    spin(job, cost(config.id, job.me.rank));
  };
  spec.options.measurement.warmup_runs = 1;
  spec.options.measurement.timed_runs = 3;
  spec.options.measurement.strategy = "exhaustive";
  spec.options.timer =
      std::make_shared<disttune::CudaTimer>(disttune::CudaTimerOptions{.stream = job.stream.get()});
  spec.options.communicator = std::move(ranks);
  spec.options.cache_root = job.dir / ("rank" + std::to_string(job.me.rank));
  spec.options.disk_cache = disk;
  return Tuned(std::move(spec));
}

bool verdict(const Job& job, const std::string& scenario, bool passed, const std::string& detail) {
  std::printf("rank %d: %s: %s %s\n", job.me.rank, scenario.c_str(), passed ? "PASS" : "FAIL",
              detail.c_str());
  std::fflush(stdout);
  return passed;
}

/// Whether every rank chose `best` (MPI carries the check, apart from the engine's NCCL).
bool all_chose(std::size_t best) {
  int mine = static_cast<int>(best);
  int lowest = 0;
  int highest = 0;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lowest == highest;
}

std::string agreed_times(const disttune::TuningReport& report) {
  std::string text;
  for (const auto& candidate : report.candidates) {
    text += (text.empty() ? "" : " / ") +
            (candidate.failed ? std::string("failed") : std::to_string(candidate.agreed_ms));
  }
  return text;
}

bool max_rule(Job& job) {
  // Config 0 is fast on rank 0 only, config 2 on the last rank only: by MAX, config 1 wins.
  const int last = job.last();
  Tuned tuned = make_tuned(
      job, "nccl_max_rule",
      [last](int id, int rank) {
        if (id == 1) return 0.5;
        return (id == 0 && rank == 0) || (id == 2 && rank == last) ? 0.2 : 1.0;
      },
      job.ranks);
  tuned(7);
  const auto report = tuned.last_report();
  const bool passed = report->best == 1 && all_chose(report->best) && report->timer == "cuda" &&
                      report->candidates[0].agreed_ms > 0.9 &&
                      report->candidates[2].agreed_ms > 0.9;
  return verdict(job, "max_rule", passed,
                 "best " + std::to_string(report->best) + ", agreed ms " + agreed_times(*report) +
                     ", timer " + report->timer);
}

bool record_on_some_ranks(Job& job) {
  // Rank 0 alone stores a record choosing config 2; then every rank tunes the same key, with
  // config 1 fastest: the vote finds a record on rank 0 only, so all of them tune.
  if (job.me.rank == 0) {
    Tuned alone = make_tuned(
        job, "nccl_record_some_ranks", [](int id, int) { return id == 2 ? 0.2 : 1.0; }, nullptr,
        true);
    alone(7);
    if (alone.last_report()->best != 2)
      return verdict(job, "record_on_some_ranks", false, "the lone tuning did not choose 2");
  }
  Tuned tuned = make_tuned(
      job, "nccl_record_some_ranks", [](int id, int) { return id == 1 ? 0.2 : 1.0; }, job.ranks,
      true);
  tuned(7);
  const auto report = tuned.last_report();
  const bool passed = report->source == disttune::TuningReport::Source::tuned &&
                      report->best == 1 && all_chose(report->best);
  return verdict(
      job, "record_on_some_ranks", passed,
      std::string(report->source == disttune::TuningReport::Source::tuned ? "tuned"
                                                                          : "from a store") +
          " on this rank, best " + std::to_string(report->best));
}

bool divergent_prune(Job& job) {
  // The last rank prunes config 0 away: every rank must refuse, naming the rank that differs.
  const int last = job.last();
  Tuned tuned = make_tuned(
      job, "nccl_divergent_prune", [](int, int) { return 0.2; }, job.ranks, false, {},
      [last, rank = job.me.rank](const Config& config, const int&) {
        return !(rank == last && config.id == 0);
      });
  std::string message;
  try {
    tuned(7);
  } catch (const disttune::RankDisagreement& error) {
    message = error.what();
  }
  const bool passed =
      message.find("rank " + std::to_string(last) + " differs from rank 0") != std::string::npos;
  return verdict(job, "divergent_prune", passed, "error: " + (message.empty() ? "none" : message));
}

bool failing_config(Job& job) {
  // Config 1 (the fastest) throws on the last rank: it fails on every rank, all choose config 2.
  const int last = job.last();
  Tuned tuned = make_tuned(
      job, "nccl_failing_config",
      [](int id, int) {
        return std::array{1.0, 0.2, 0.5}.at(id);
      },
      job.ranks, false,
      [last, rank = job.me.rank](int id) {
        if (id == 1 && rank == last) throw std::runtime_error("config 1 is broken on this rank");
      });
  tuned(7);
  const auto report = tuned.last_report();
  const auto& broken = report->candidates[1];
  const bool reason_ok = job.me.rank == last ? broken.error.find("broken") != std::string::npos
                                             : broken.error == "failed on another rank";
  const bool passed = broken.failed && reason_ok && report->best == 2 && all_chose(report->best);
  return verdict(job, "failing_config", passed,
                 "best " + std::to_string(report->best) + ", config 1: " + broken.error +
                     ", agreed ms " + agreed_times(*report));
}

/// Milliseconds since the epoch: whole numbers, so the fault's time survives a text file.
long long epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

/// The last rank is killed (SIGKILL) or hangs (sleeps) in config 1's first run, after writing
/// the fault's time; every other rank must raise an error naming it within the deadline + 5 s.
[[noreturn]] void fault(Job& job, const std::string& scenario) {
  const int last = job.last();
  const fs::path fault_time = job.dir / "fault_time";
  const bool kill = scenario == "killed_rank";
  Tuned tuned = make_tuned(
      job, "nccl_" + scenario, [](int, int) { return 0.2; }, job.ranks, false,
      [&, last](int id) {
        if (id != 1 || job.me.rank != last) return;
        std::ofstream(fault_time) << epoch_ms();
        std::fflush(nullptr);
        if (kill) std::raise(SIGKILL);
        std::this_thread::sleep_for(std::chrono::hours(1));
      });
  std::string message;
  try {
    tuned(7);
    message = "no error";
  } catch (const std::exception& error) {
    message = error.what();
  }
  const long long now_ms = epoch_ms();
  long long fault_ms = -1;
  std::ifstream(fault_time) >> fault_ms;
  const double since_fault = fault_ms < 0 ? -1.0 : static_cast<double>(now_ms - fault_ms) / 1000.0;
  const double limit =
      std::chrono::duration<double>(disttune::default_collective_timeout()).count() + 5.0;
  const bool named =
      message.find("ranks that did not arrive: " + std::to_string(last) + " ") != std::string::npos;
  const bool passed = named && since_fault >= 0.0 && since_fault <= limit;
  char timing[128];
  std::snprintf(timing, sizeof timing,
                "raised %.2f s after the fault (limit: deadline + 5 s = %.1f s)", since_fault,
                limit);
  verdict(job, scenario, passed, std::string(timing) + "; error: " + message);
  // The NCCL communicator is aborted and a peer is gone or stuck: end the job.
  job.nccl->abandon();
  MPI_Abort(MPI_COMM_WORLD, passed ? 3 : 1);
  std::abort();
}

int run(const std::string& scenario, const fs::path& dir) {
  Job job(nccl_world::MpiRank::on_its_gpu(), dir);
  if (job.me.size < 2) {
    std::fprintf(stderr, "nccl_fault_scenarios needs 2 or more ranks (mpirun -np N)\n");
    return 2;
  }
  job.nccl = std::make_unique<nccl_world::NcclComm>(job.me);
  job.ranks = disttune::make_nccl_communicator(job.nccl->get(), job.stream.get(), std::nullopt,
                                               disttune::make_mpi_roll_call(MPI_COMM_WORLD));
  const std::map<std::string, std::function<bool(Job&)>> scenarios = {
      {"max_rule", max_rule},
      {"record_on_some_ranks", record_on_some_ranks},
      {"divergent_prune", divergent_prune},
      {"failing_config", failing_config},
  };
  if (scenario == "killed_rank" || scenario == "hung_rank") fault(job, scenario);
  const auto found = scenarios.find(scenario);
  if (found == scenarios.end()) {
    std::fprintf(stderr, "unknown scenario '%s'\n", scenario.c_str());
    return 2;
  }
  const bool passed = found->second(job);
  job.ranks.reset();
  return passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <scenario> <fresh directory>\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (auto reason = disttune::cuda_unavailable_reason()) {
    std::fprintf(stderr, "nccl_fault_scenarios needs a CUDA device per rank: %s\n",
                 reason->c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int status = 1;
  try {
    status = run(argv[1], argv[2]);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "nccl_fault_scenarios %s failed: %s\n", argv[1], error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
