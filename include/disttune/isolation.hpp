// Isolated runs in C++: a CPU launcher's candidates run and are timed in a fork()ed worker process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "disttune/timer.hpp"

namespace disttune {

/// Options of isolated runs (AutotuneSpec::isolation). The worker is a fork() of the caller,
/// so it sees the call's arguments as they are, and its in-place writes never reach the
/// caller. For CPU launchers only: a CUDA context does not survive fork() (the Python
/// package's isolate=True starts a fresh worker process and serves GPU launchers). The fork
/// holds only the calling thread: a launcher must not wait for the caller's other threads
/// (a thread pool made before the tuning), and the runs are timed with the steady clock.
struct IsolationOptions {
  /// A candidate whose run (or check) takes longer fails with "timed out after N s"; its
  /// worker is killed, and the next candidate gets a new one.
  std::chrono::milliseconds candidate_timeout{std::chrono::seconds(60)};
};

/// The worker process of one tuning: forked on first use and again after a crash or a
/// time-out; killed when destroyed. Every call waits for the worker's answer, at most
/// options.candidate_timeout, and throws std::runtime_error naming what went wrong (the
/// candidate's exception, "crashed (signal SIGSEGV)", "timed out after N s", "the worker
/// exited with status 3"). The worker leads a process group of its own, killed as a whole
/// (with every process a config started) on a time-out, a crash and when destroyed; a call
/// after which the group holds more than 256 processes fails and kills it. Not thread-safe.
class ForkedWorker {
 public:
  /// In the worker: `check(c)` checks candidate c once (a failure text, or nullopt if it is
  /// good), `restore()` puts the inputs back before each run, `run(c)` runs candidate c once.
  ForkedWorker(std::function<std::optional<std::string>(std::size_t)> check,
               std::function<void()> restore, std::function<void(std::size_t)> run,
               IsolationOptions options);
  ~ForkedWorker();
  ForkedWorker(const ForkedWorker&) = delete;
  ForkedWorker& operator=(const ForkedWorker&) = delete;

  /// Checks candidate `c` in the worker.
  void check(std::size_t c);
  /// Runs candidate `c` once in the worker, inputs restored first; its duration in ms
  /// (the worker's steady clock around the run only).
  double run(std::size_t c);

 private:
  struct Reply {
    bool ok = false;
    double ms = 0.0;
    std::string error;
  };
  Reply request(char kind, std::size_t c);
  void start();
  void stop();
  [[noreturn]] void serve(int socket);

  std::function<std::optional<std::string>(std::size_t)> check_;
  std::function<void()> restore_;
  std::function<void(std::size_t)> run_;
  IsolationOptions options_;
  pid_t pid_ = -1;
  int socket_ = -1;
};

/// The engine's timer in isolated mode: a timed run's sample is the duration the worker
/// measured (add_sample(), called by the run between start() and stop()).
class WorkerTimer final : public Timer {
 public:
  void start() override { timed_ = true; }
  void stop() override { timed_ = false; }
  std::vector<double> collect() override;
  std::string name() const override { return "cpu-isolated"; }
  /// True between start() and stop(): the current run is a timed one.
  bool timed() const { return timed_; }
  void add_sample(double ms) { samples_.push_back(ms); }

 private:
  bool timed_ = false;
  std::vector<double> samples_;
};

}  // namespace disttune
