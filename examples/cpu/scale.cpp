// The spec's `scale` example on the CPU: y = alpha * x, tuned over block size and threads.
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../common/inputs.hpp"
#include "disttune/autotune.hpp"
#include "scale_launcher.hpp"

namespace {

using scale_example::ScaleConfig;

using Key = std::tuple<std::size_t, std::string>;
using Signature = void(std::span<const float>, std::span<float>, float);

/// The Spec of both spellings of the tuned function.
using Spec = disttune::Autotuned<ScaleConfig, Key, Signature>::Spec;

/// The direct spelling: the key function and the launcher keep their own types, so a cache
/// hit calls them directly (the type-erased spelling, spec.key and spec.launch set and
/// `disttune::Autotuned<ScaleConfig, Key, Signature>`, works the same through two std::functions).
auto make_scale() {
  Spec spec;
  spec.identity = DISTTUNE_FUNCTION("scale");
  spec.configs = scale_example::config_space();
  // Like the spec's prune_fn: a block must fit in 32 KiB.
  spec.prune = [](const ScaleConfig& c, const std::span<const float>&, const std::span<float>&,
                  const float&) { return scale_example::block_fits(c); };
  return disttune::Autotuned(
      std::move(spec),
      // The key: the input's layout (alpha does not change which config is best).
      [](const std::span<const float>& x, const std::span<float>&, const float&) {
        return std::make_tuple(x.size(), std::string("float32"));
      },
      [](const ScaleConfig& c, std::span<const float> x, std::span<float> y, float alpha) {
        scale_example::scale_launch(c, x, y, alpha);
      });
}

void check(std::span<const float> x, std::span<const float> y, float alpha) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (y[i] != alpha * x[i]) throw std::runtime_error("wrong result at " + std::to_string(i));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = example::size_argument(argc, argv, std::size_t{1} << 22);
  const std::vector<float> x = example::normal_floats(n, 1234);
  std::vector<float> y(n);

  auto scale = make_scale();
  std::printf("scale: %zu floats, %zu configs in the space\n", n, scale.spec().configs.size());

  scale.call({.autotune = true, .verbose = false}, x, y, 2.5f);
  check(x, y, 2.5f);
  const auto report = scale.last_report();
  std::printf("%s", disttune::format_table(*report).c_str());
  std::printf("chosen config: %s (%s)\n", report->candidates[report->best].config.c_str(),
              disttune::source_name(*report) == "disk" ? "read from the disk cache"
                                                       : "tuned now");

  scale(x, y, 3.0f);  // the same key again: the in-process cache answers, no tuning
  check(x, y, 3.0f);
  std::printf("second call, same key: in-process cache hit, config %s\n",
              disttune::canonical_json(describe(scale.spec().configs[*scale.cached_choice(
                                           std::make_tuple(n, std::string("float32")))]))
                  .c_str());
  return 0;
}
