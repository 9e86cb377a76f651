// Test support: plays Tunings through the engine's RoundDriver with given timings (Kernel Tuner's simulation idea).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "disttune/communicator.hpp"
#include "disttune/tuning.hpp"
#include "engine/round_driver.hpp"

namespace disttune::simulation {

/// The time (ms) of the `run`-th timed run of candidate `candidate`.
using Sampler = std::function<double(std::size_t candidate, int run)>;

/// Candidate names "0", "1", ... for `count` candidates.
inline std::vector<std::string> names(std::size_t count) {
  std::vector<std::string> list;
  for (std::size_t i = 0; i < count; ++i) list.push_back(std::to_string(i));
  return list;
}

/// Deterministic noisy timings: base[c] * (1 + noise * u), u uniform in [-1, 1], seeded.
inline Sampler noisy(std::vector<double> base, double noise, unsigned seed) {
  auto engine = std::make_shared<std::mt19937>(seed);
  return [=](std::size_t c, int) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    return base[c] * (1.0 + noise * u(*engine));
  };
}

inline std::string render(const Step& step) {
  char letter = '?';
  switch (step.kind) {
    case StepKind::barrier: letter = 'B'; break;
    case StepKind::warmup: letter = 'w'; break;
    case StepKind::timed: letter = 't'; break;
    case StepKind::collect: letter = 'c'; break;
    case StepKind::round_end: return "end";
  }
  std::string text(1, letter);
  text += std::to_string(step.candidate);
  return text;
}

/// In-process ranks, one thread each, meeting at every collective. Each collective checks
/// that every rank makes the same one (phase and candidate) and throws on every rank if
/// not, or if a rank has left (finished or failed) while others wait. Real collectives, so
/// engine code driven on these threads (a RoundDriver, a FunctionTuner) runs unchanged.
class LockstepRanks {
 public:
  explicit LockstepRanks(int size) : size_(size), phases_(static_cast<std::size_t>(size)) {}

  /// Rank `rank`'s Communicator.
  class Rank final : public Communicator {
   public:
    Rank(LockstepRanks& ranks, int rank) : ranks_(ranks), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return ranks_.size_; }
    int local_rank() const override { return rank_; }
    void barrier(const CollectiveContext& context) override { ranks_.meet(rank_, context, {}); }
    void all_reduce_max(std::span<double> values, const CollectiveContext& context) override {
      for (const Payload& other : ranks_.meet(rank_, context, {{values.begin(), values.end()}, {}})) {
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::max(values[i], other.values.at(i));
      }
    }
    std::vector<std::string> all_gather(const std::string& bytes, const CollectiveContext& context) override {
      std::vector<std::string> all;
      for (Payload& part : ranks_.meet(rank_, context, {{}, bytes})) all.push_back(std::move(part.bytes));
      return all;
    }

   private:
    LockstepRanks& ranks_;
    int rank_;
  };

  /// Rank `rank` will make no more collectives.
  void leave(int rank) {
    std::lock_guard lock(mutex_);
    (void)rank;
    ++left_;
    changed_.notify_all();
  }

 private:
  /// What one rank brings to a collective.
  struct Payload {
    std::vector<double> values;
    std::string bytes;
  };

  std::vector<Payload> meet(int rank, const CollectiveContext& context, Payload payload) {
    std::unique_lock lock(mutex_);
    const long generation = generation_;
    const std::string phase = context.phase + (context.candidate ? " " + std::to_string(*context.candidate) : "");
    phases_[static_cast<std::size_t>(rank)] = phase;
    arrived_values_.resize(static_cast<std::size_t>(size_));
    arrived_values_[static_cast<std::size_t>(rank)] = std::move(payload);
    if (++arrived_ == size_) {
      gathered_ = arrived_values_;
      met_phases_ = phases_;
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return generation_ != generation || left_ > 0; });
      if (generation_ == generation) {
        throw std::runtime_error("ranks diverged: rank " + std::to_string(rank) + " waits at '" + phase +
                                 "' but another rank made no more collectives");
      }
    }
    for (int r = 0; r < size_; ++r) {
      if (met_phases_[static_cast<std::size_t>(r)] != phase) {
        throw std::runtime_error("ranks diverged: rank " + std::to_string(rank) + " at '" + phase + "', rank " +
                                 std::to_string(r) + " at '" + met_phases_[static_cast<std::size_t>(r)] + "'");
      }
    }
    return gathered_;
  }

  int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
  int left_ = 0;
  long generation_ = 0;
  std::vector<std::string> phases_;
  std::vector<std::string> met_phases_;
  std::vector<Payload> arrived_values_;
  std::vector<Payload> gathered_;
};

/// Runs body(rank, its communicator) for ranks 0 to size - 1, each on its own thread with a
/// LockstepRanks communicator; once every rank ended, rethrows the error of the first rank
/// (by number) that raised one.
inline void on_lockstep_ranks(int size, const std::function<void(std::size_t, Communicator&)>& body) {
  LockstepRanks ranks(size);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      const auto rank = static_cast<std::size_t>(r);
      try {
        LockstepRanks::Rank comm(ranks, r);
        body(rank, comm);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
      ranks.leave(r);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

/// One simulated rank's runs: samples from its sampler, a trace of every step.
class ReplaySite final : public detail::RunSite, public detail::RoundObserver {
 public:
  ReplaySite(Sampler sampler, std::vector<std::size_t> fail_at_warmup)
      : sampler_(std::move(sampler)), fail_at_warmup_(std::move(fail_at_warmup)) {}

  std::optional<std::vector<double>> time_batch(std::size_t, int) override { return std::nullopt; }
  std::map<std::size_t, detail::CollectedRuns> collect() override { return std::exchange(pending_, {}); }
  void step(const Step& step) override {
    if (!trace_.empty()) trace_ += ' ';
    trace_ += render(step);
  }

  void run(const Step& step) {
    if (step.kind == StepKind::warmup &&
        std::find(fail_at_warmup_.begin(), fail_at_warmup_.end(), step.candidate) != fail_at_warmup_.end()) {
      throw std::runtime_error("boom");
    }
    if (step.kind == StepKind::timed) {
      if (runs_.size() <= step.candidate) runs_.resize(step.candidate + 1, 0);
      pending_[step.candidate].samples.push_back(sampler_(step.candidate, runs_[step.candidate]++));
    }
  }
  const std::string& trace() const { return trace_; }

 private:
  Sampler sampler_;
  std::vector<std::size_t> fail_at_warmup_;
  std::vector<int> runs_;
  std::map<std::size_t, detail::CollectedRuns> pending_;
  std::string trace_;
};

/// Plays the tunings of several simulated ranks, each on its own thread through the
/// engine's RoundDriver, rank r's samples from samplers[r]; candidates in `fail_at_warmup`
/// fail at their first warm-up on rank `failing_rank`. The collectives (barriers, round
/// ends) must match on every rank, else this throws. Returns rank 0's trace.
inline std::string replay_ranks(std::vector<Tuning*> tunings, const std::vector<Sampler>& samplers,
                                const std::vector<std::size_t>& fail_at_warmup = {},
                                std::size_t failing_rank = 0) {
  const int size = static_cast<int>(tunings.size());
  std::vector<std::unique_ptr<ReplaySite>> sites;
  for (int r = 0; r < size; ++r) {
    const auto rank = static_cast<std::size_t>(r);
    sites.push_back(std::make_unique<ReplaySite>(
        samplers[rank], rank == failing_rank ? fail_at_warmup : std::vector<std::size_t>{}));
  }
  on_lockstep_ranks(size, [&](std::size_t rank, Communicator& comm) {
    ReplaySite& site = *sites[rank];
    detail::RoundDriver driver(*tunings[rank], comm, detail::ContextMaker{"replay", "[]", std::chrono::minutes(1)},
                               site, site);
    driver.drive([&](const Step& step) { site.run(step); });
  });
  return sites[0]->trace();
}

/// One rank: candidate c's timed runs take times[c][run], repeating the last.
inline std::string replay(Tuning& tuning, const std::vector<std::vector<double>>& times,
                          const std::vector<std::size_t>& fail_at_warmup = {}) {
  const Sampler sampler = [&](std::size_t c, int run) {
    const auto& list = times[c];
    return list[std::min(static_cast<std::size_t>(run), list.size() - 1)];
  };
  return replay_ranks({&tuning}, {sampler}, fail_at_warmup);
}

}  // namespace disttune::simulation
