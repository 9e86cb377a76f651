// The record reader (parse_record, what every store and _core.parse_record read through) on
// records of 1,000 / 10,000 / 100,000 candidates: the time per candidate should stay flat.
#include <benchmark/benchmark.h>

#include <string>

#include "disttune/store.hpp"

namespace {

// A record's JSON text with `count` measured candidates, the last one the best.
std::string record_text(std::size_t count) {
  disttune::Record record;
  record.id = {"bench_record_read", std::string(64, 'f'), std::string(64, 'a'), R"({"m":4096})"};
  record.measurement.strategy = "exhaustive";
  record.created_utc = "2026-12-04T21:00:00Z";
  record.library_version = "0.1.0";
  for (std::size_t i = 0; i < count; ++i) {
    disttune::CandidateResult candidate;
    candidate.config = R"({"block":)" + std::to_string(i) + R"(,"warps":4})";
    candidate.samples = {2.0 - 1e-6 * static_cast<double>(i), 2.1, 1.9};
    candidate.local_ms = candidate.agreed_ms = 2.0 - 1e-6 * static_cast<double>(i);
    candidate.measured = true;
    record.candidates.push_back(std::move(candidate));
  }
  record.best_index = count - 1;
  return disttune::record_to_json(record).dump();
}

void parse_record_of(benchmark::State& state) {
  const std::string text = record_text(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    const disttune::RecordRead read = disttune::parse_record(text);
    if (!read.record) state.SkipWithError(read.error.c_str());
    benchmark::DoNotOptimize(read);
  }
  state.counters["per_candidate"] = benchmark::Counter(
      static_cast<double>(state.range(0)),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

BENCHMARK(parse_record_of)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
