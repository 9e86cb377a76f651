// A tuning's host time over 1k/10k/100k configs with a prepare (precompile) hook and without (issue 38).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "disttune/function_tuner.hpp"
#include "disttune/timer.hpp"

namespace {

/// Every run takes 1 ms, without a clock: what is measured is the engine's host work.
class FixedTimer final : public disttune::Timer {
 public:
  void start() override {}
  void stop() override { runs_.push_back(1.0); }
  std::vector<double> collect() override { return std::exchange(runs_, {}); }
  std::string name() const override { return "fixed"; }

 private:
  std::vector<double> runs_;
};

std::vector<std::string> configs(std::size_t count) {
  std::vector<std::string> list;
  for (std::size_t i = 0; i < count; ++i) list.push_back("{\"id\":" + std::to_string(i) + "}");
  return list;
}

/// One exhaustive tuning (one warm-up and one timed run per config), as a Python
/// `precompile` drives it when `prepared`: the counter `named_per_config` is what the hook
/// was handed (now and ahead) per config.
void tuning(benchmark::State& state, bool prepared) {
  const auto count = static_cast<std::size_t>(state.range(0));
  disttune::TuningRequest request;
  request.key = "[1]";
  request.candidates = configs(count);
  request.run = [](std::size_t) {};
  std::size_t named = 0;
  if (prepared) {
    request.prepare = [&named](std::span<const std::size_t> now, std::span<const std::size_t> ahead) {
      named += now.size() + ahead.size();
      return std::vector<std::string>(now.size());
    };
  }
  disttune::TunerOptions options;
  options.measurement.strategy = "exhaustive";
  options.measurement.warmup_runs = 1;
  options.measurement.timed_runs = 1;
  options.timer = std::make_shared<FixedTimer>();
  options.disk_cache = false;
  for (auto _ : state) {
    disttune::FunctionTuner tuner({"bench_prepare_plan", "v1"}, options);
    benchmark::DoNotOptimize(tuner.resolve(request).best);
  }
  state.counters["named_per_config"] =
      static_cast<double>(named) / static_cast<double>(count) / static_cast<double>(state.iterations());
}

void with_prepare(benchmark::State& state) { tuning(state, true); }
void without_prepare(benchmark::State& state) { tuning(state, false); }

BENCHMARK(with_prepare)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(without_prepare)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
