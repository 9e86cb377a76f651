// The spec's `scale` example across MPI ranks on the CPU: every rank times every config,
// a config's time is the maximum over ranks, and every rank uses the same config.
// Run: mpirun -np 4 scale_mpi [floats per rank]
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../common/inputs.hpp"
#include "disttune/autotune.hpp"
#include "disttune/mpi.hpp"
#include "scale_launcher.hpp"

namespace {

using scale_example::ScaleConfig;

using Scale = disttune::Autotuned<ScaleConfig, std::tuple<std::size_t, std::string>,
                                  void(std::span<const float>, std::span<float>, float)>;

Scale make_scale(std::shared_ptr<disttune::Communicator> ranks) {
  Scale::Spec spec;
  spec.identity = DISTTUNE_FUNCTION("scale_mpi");
  spec.configs = scale_example::config_space();
  // The key: the shard's layout (the same on every rank); alpha does not change the choice.
  spec.key = [](const std::span<const float>& x, const std::span<float>&, const float&) {
    return std::make_tuple(x.size(), std::string("float32"));
  };
  // The spec's prune_fn: a block must fit in 32 KiB. It must not depend on the rank.
  spec.prune = [](const ScaleConfig& c, const std::span<const float>&, const std::span<float>&,
                  const float&) { return scale_example::block_fits(c); };
  spec.launch = scale_example::scale_launch;
  spec.options.communicator = std::move(ranks);
  return Scale(std::move(spec));
}

void check(std::span<const float> x, std::span<const float> y, float alpha) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (y[i] != alpha * x[i]) throw std::runtime_error("wrong result at " + std::to_string(i));
  }
}

int run(int argc, char** argv) {
  std::shared_ptr<disttune::Communicator> ranks = disttune::make_mpi_communicator();
  const int rank = ranks->rank();
  const std::size_t n = example::size_argument(argc, argv, std::size_t{1} << 20);
  const std::vector<float> x = example::normal_floats(n, 1234u + static_cast<unsigned>(rank));
  std::vector<float> y(n);

  Scale scale = make_scale(ranks);
  if (rank == 0) {
    std::printf("scale_mpi: %d ranks, %zu floats per rank, %zu configs in the space\n",
                ranks->size(), n, scale.spec().configs.size());
  }
  scale(x, y, 2.5f);
  check(x, y, 2.5f);
  const auto report = scale.last_report();

  // What each rank alone would have picked, next to what the ranks agreed on.
  std::size_t local_best = 0;
  for (std::size_t i = 0; i < report->candidates.size(); ++i) {
    const auto& c = report->candidates[i];
    if (!c.failed && c.measured && c.local_ms < report->candidates[local_best].local_ms) local_best = i;
  }
  const std::string line = "rank " + std::to_string(rank) + ": alone it would pick " +
                           report->candidates[local_best].config + ", uses " +
                           report->candidates[report->best].config;
  const auto context = disttune::CollectiveContext{
      "example summary", "scale_mpi", "", std::nullopt,
      disttune::deadline_after(disttune::default_collective_timeout())};
  const std::vector<std::string> lines = ranks->all_gather(line, context);
  if (rank == 0) {
    std::printf("%s", disttune::format_table(*report).c_str());
    for (const auto& each : lines) std::printf("%s\n", each.c_str());
    std::printf("chosen config: %s (%s); time of a config = max over ranks\n",
                report->candidates[report->best].config.c_str(),
                disttune::source_name(*report) == "disk" ? "read from the disk cache"
                                                         : "tuned now");
  }
  scale(x, y, 3.0f);  // the same key again: the in-process cache answers on every rank
  check(x, y, 3.0f);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "scale_mpi failed: %s\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
