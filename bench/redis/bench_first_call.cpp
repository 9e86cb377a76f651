// The first call of a new tuner on one key: a Redis hit vs a disk hit vs a full tuning.
//   bench_first_call [Google Benchmark flags]; starts its own redis-server on 127.0.0.1.
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "disttune/fingerprint.hpp"
#include "disttune/function_tuner.hpp"
#include "redis_server.hpp"
#include "store/redis/store.hpp"
#include "store_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using disttune::FunctionTuner;
using disttune::RedisOptions;
using disttune::TunerOptions;
using disttune::TuningReport;
using disttune::TuningRequest;

// A full tuning: 8 configs, the spec's 5 warm-up + 10 timed runs each, 100 us of CPU work a run.
const std::vector<std::string> kCandidates = {"1", "2", "3", "4", "5", "6", "7", "8"};

void spin(std::chrono::microseconds work) {
  const auto end = std::chrono::steady_clock::now() + work;
  while (std::chrono::steady_clock::now() < end) {
  }
}

TuningReport first_call(const fs::path& root, const std::string& redis_url) {
  TunerOptions options;
  options.stores = {root.string()};
  if (!redis_url.empty()) options.stores->push_back(redis_url + "?prefix=bench:&timeout=1");
  FunctionTuner tuner({"bench_first_call", "v1"}, options);  // a new process's tuner
  TuningRequest request;
  request.key = R"({"n":4096})";
  request.candidates = kCandidates;
  request.run = [](std::size_t) { spin(std::chrono::microseconds(100)); };
  return tuner.resolve(request);
}

disttune::testing::RedisServer& server() {
  static disttune::testing::RedisServer redis;
  return redis;
}

void expect(benchmark::State& state, const TuningReport& report, const std::string& source) {
  if (source_name(report) != source) state.SkipWithError("the call did not come from the expected source");
}

void redis_hit(benchmark::State& state) {
  disttune::testing::TempDir seed, node;
  first_call(seed.path(), server().url());  // Redis holds the record
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(node.path() / "bench_first_call");  // a node that has never seen it
    state.ResumeTiming();
    expect(state, first_call(node.path(), server().url()), "redis");
  }
}

// The Redis part of redis_hit alone: connect, read script, parse and validate; no local copy.
void redis_load_only(benchmark::State& state) {
  disttune::testing::TempDir seed;
  first_call(seed.path(), server().url());
  const disttune::RecordId id{"bench_first_call", "v1",
                              disttune::make_fingerprint(disttune::CpuTimer()).hardware_digest(),
                              R"({"n":4096})"};
  for (auto _ : state) {
    const disttune::detail::RedisStore store(
        RedisOptions{server().url(), "bench:", std::chrono::milliseconds(1000)});
    if (!store.load(id)) state.SkipWithError("Redis has no record");
  }
}

void disk_hit(benchmark::State& state) {
  disttune::testing::TempDir node;
  first_call(node.path(), "");
  for (auto _ : state) expect(state, first_call(node.path(), ""), "disk");
}

void full_tuning(benchmark::State& state) {
  disttune::testing::TempDir node;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(node.path() / "bench_first_call");
    state.ResumeTiming();
    expect(state, first_call(node.path(), ""), "tuned");
  }
}

BENCHMARK(redis_hit)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(200);
BENCHMARK(redis_load_only)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(200);
BENCHMARK(disk_hit)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(200);
BENCHMARK(full_tuning)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(20);

}  // namespace

BENCHMARK_MAIN();
