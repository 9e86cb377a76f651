// The spec's contextual method on the CPU: an outer function with two tunable kernels that
// share a buffer (scale, then a sum of squares), tuned inside its real calls.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../common/expect_near.hpp"
#include "../common/inputs.hpp"
#include "../common/print_choice.hpp"
#include "disttune/context.hpp"

namespace {

/// A config of both kernels: elements per block and worker threads that share the blocks.
struct Blocking {
  int block = 0;
  int threads = 1;
};
disttune::Value describe(const Blocking& c) { return {{"BLOCK", c.block}, {"threads", c.threads}}; }

std::vector<Blocking> blockings(std::initializer_list<int> blocks) {
  std::vector<Blocking> space;
  for (int block : blocks) {
    for (int threads : {1, 2}) space.push_back({block, threads});
  }
  return space;
}

/// Runs body(first, end) over the blocks of [0, n) that belong to each worker.
template <class Body>
void over_blocks(std::size_t n, const Blocking& c, Body body) {
  auto worker = [&](int t) {
    for (std::size_t start = static_cast<std::size_t>(t) * c.block; start < n;
         start += static_cast<std::size_t>(c.threads) * c.block) {
      body(t, start, std::min(n, start + static_cast<std::size_t>(c.block)));
    }
  };
  std::vector<std::jthread> workers;
  for (int t = 1; t < c.threads; ++t) workers.emplace_back(worker, t);
  worker(0);
}

using Scale = disttune::TunableKernel<Blocking, std::size_t,
                                      void(std::span<const float>, std::span<float>, float)>;
using SumSquares = disttune::TunableKernel<Blocking, std::size_t, double(std::span<const float>)>;

/// y = alpha * x.
Scale make_scale() {
  Scale::Spec spec;
  spec.name = "scale";
  spec.configs = blockings({1024, 16384});
  spec.key = [](const std::span<const float>& x, const std::span<float>&, const float&) { return x.size(); };
  spec.launch = [](const Blocking& c, std::span<const float> x, std::span<float> y, float alpha) {
    over_blocks(x.size(), c, [&](int, std::size_t first, std::size_t end) {
      for (std::size_t i = first; i < end; ++i) y[i] = alpha * x[i];
    });
  };
  return Scale(std::move(spec));
}

/// sum(y * y), accumulated per worker in double.
SumSquares make_sum_squares() {
  SumSquares::Spec spec;
  spec.name = "sum_squares";
  spec.configs = blockings({4096, 65536});
  spec.key = [](const std::span<const float>& y) { return y.size(); };
  spec.launch = [](const Blocking& c, std::span<const float> y) {
    std::vector<double> partial(static_cast<std::size_t>(c.threads), 0.0);
    over_blocks(y.size(), c, [&](int t, std::size_t first, std::size_t end) {
      for (std::size_t i = first; i < end; ++i) partial[static_cast<std::size_t>(t)] += double(y[i]) * y[i];
    });
    double sum = 0.0;
    for (double p : partial) sum += p;
    return sum;
  };
  return SumSquares(std::move(spec));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::size_t n = example::size_argument(argc, argv, std::size_t{1} << 20);
    const std::vector<float> x = example::normal_floats(n, 1234);
    std::vector<float> y(n);

    Scale scale = make_scale();
    SumSquares sum_squares = make_sum_squares();
    // The outer function: both kernels in their real context (the same buffers, in order).
    auto scaled_norm = disttune::make_contextual(
        "scaled_norm",
        [&](float alpha) {
          scale(x, y, alpha);
          return std::sqrt(sum_squares(y));
        },
        disttune::ContextOptions{});  // is_dist=false, n_warmup=3, n_repeat=5

    const float alpha = 2.5f;
    const double norm = scaled_norm(alpha);
    double reference = 0.0;
    for (float v : x) reference += double(alpha * v) * (alpha * v);
    example::expect_near(norm, std::sqrt(reference), 1e-9, "norm");
    std::printf("scaled_norm: %zu floats, %d outer runs, result checked (%.6f)\n", n,
                scaled_norm.tuner().outer_runs(), norm);
    example::print_choice(scale);
    example::print_choice(sum_squares);

    scaled_norm(alpha);  // the same keys: every kernel uses its cached choice, one run
    if (scaled_norm.tuner().outer_runs() != 1) throw std::runtime_error("expected one outer run on a cache hit");
    std::printf("second call: %d outer run (cached choices)\nlog: %s\n", scaled_norm.tuner().outer_runs(),
                scaled_norm.tuner().log_path().c_str());
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "contextual example failed: %s\n", error.what());
    return 1;
  }
}
