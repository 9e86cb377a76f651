// The spec's `scale` example on the CPU: y = alpha * x, tuned over block size and threads.
#include <cstdio>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "disttune/autotune.hpp"

namespace {

/// One config: elements per block and worker threads that share the blocks.
struct ScaleConfig {
  int block = 0;
  int threads = 1;
};
disttune::Value describe(const ScaleConfig& c) { return {{"BLOCK", c.block}, {"threads", c.threads}}; }

/// The config space: like the spec's 4 block sizes x 2 warp counts, here x threads.
std::vector<ScaleConfig> config_space() {
  std::vector<ScaleConfig> space;
  for (int block : {256, 1024, 4096, 16384}) {
    for (int threads : {1, 2}) space.push_back({block, threads});
  }
  return space;
}

void scale_blocks(std::span<const float> x, std::span<float> y, float alpha, int block, int first,
                  int stride) {
  const std::size_t n = x.size();
  for (std::size_t start = static_cast<std::size_t>(first) * block; start < n;
       start += static_cast<std::size_t>(stride) * block) {
    const std::size_t end = std::min(n, start + static_cast<std::size_t>(block));
    for (std::size_t i = start; i < end; ++i) y[i] = alpha * x[i];
  }
}

/// The launcher: y = alpha * x with the config's blocking and threads.
void scale_launch(const ScaleConfig& c, std::span<const float> x, std::span<float> y, float alpha) {
  std::vector<std::jthread> workers;
  for (int t = 1; t < c.threads; ++t) {
    workers.emplace_back([=] { scale_blocks(x, y, alpha, c.block, t, c.threads); });
  }
  scale_blocks(x, y, alpha, c.block, 0, c.threads);
}

using Scale = disttune::Autotuned<ScaleConfig, std::tuple<std::size_t, std::string>,
                                  void(std::span<const float>, std::span<float>, float)>;

Scale make_scale() {
  Scale::Spec spec;
  spec.identity = DISTTUNE_FUNCTION("scale");
  spec.configs = config_space();
  // The key: the input's layout (alpha does not change which config is best).
  spec.key = [](const std::span<const float>& x, const std::span<float>&, const float&) {
    return std::make_tuple(x.size(), std::string("float32"));
  };
  // Like the spec's prune_fn: a block must fit in 32 KiB.
  spec.prune = [](const ScaleConfig& c, const std::span<const float>&, const std::span<float>&,
                  const float&) { return c.block * sizeof(float) < 32 * 1024; };
  spec.launch = scale_launch;
  return Scale(std::move(spec));
}

void check(std::span<const float> x, std::span<const float> y, float alpha) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (y[i] != alpha * x[i]) throw std::runtime_error("wrong result at " + std::to_string(i));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::stoul(argv[1]) : (std::size_t{1} << 22);
  std::vector<float> x(n), y(n);
  std::mt19937 engine(1234);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  for (auto& v : x) v = uniform(engine);

  Scale scale = make_scale();
  std::printf("scale: %zu floats, %zu configs in the space\n", n, scale.spec().configs.size());

  scale.call({.autotune = true, .verbose = false}, x, y, 2.5f);
  check(x, y, 2.5f);
  const auto report = scale.last_report();
  std::printf("%s", disttune::format_table(*report).c_str());
  std::printf("chosen config: %s (%s)\n", report->candidates[report->best].config.c_str(),
              report->source == disttune::TuningReport::Source::disk ? "read from the disk cache"
                                                                     : "tuned now");

  scale(x, y, 3.0f);  // the same key again: the in-process cache answers, no tuning
  check(x, y, 3.0f);
  std::printf("second call, same key: in-process cache hit, config %s\n",
              disttune::canonical_json(describe(scale.spec().configs[*scale.cached_choice(
                                           std::make_tuple(n, std::string("float32")))]))
                  .c_str());
  return 0;
}
