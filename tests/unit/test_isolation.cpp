// Tests of isolated runs (isolation.hpp through autotune.hpp): crashes, hangs and throws in a
// fork()ed worker fail one candidate each; the tuning and the caller go on.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/autotune.hpp"
#include "isolation/process_group.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;

enum class Mode { abort, segfault, hang, throws, wrong, slow, fast };

struct ModeConfig {
  Mode mode;
};
Value describe(const ModeConfig& c) { return static_cast<int>(c.mode); }

void spin_for(std::chrono::microseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
  }
}

/// Runs `mode`; the good ones return n * 2 after spinning.
int run_mode(Mode mode, int n) {
  switch (mode) {
    case Mode::abort:
      std::abort();
    case Mode::segfault:
      std::raise(SIGSEGV);
      break;
    case Mode::hang:
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    case Mode::throws:
      throw std::runtime_error("this config is broken");
    case Mode::wrong:
      return n * 3;
    case Mode::slow:
      spin_for(std::chrono::microseconds(2000));
      break;
    case Mode::fast:
      spin_for(std::chrono::microseconds(200));
      break;
  }
  return n * 2;
}

using Tuned = Autotuned<ModeConfig, int, int(int)>;

Tuned::Spec isolated_spec(const std::string& name) {
  Tuned::Spec spec;
  spec.identity = {name, "v1"};
  spec.configs = {{Mode::abort}, {Mode::segfault}, {Mode::hang}, {Mode::throws},
                  {Mode::wrong}, {Mode::slow},     {Mode::fast}};
  spec.key = [](const int& n) { return n; };
  spec.launch = [](const ModeConfig& c, int n) { return run_mode(c.mode, n); };
  spec.check.reference = [](int n) { return n * 2; };
  spec.options.measurement.strategy = "exhaustive";  // samples per candidate: its 3
  spec.options.measurement.warmup_runs = 1;
  spec.options.measurement.timed_runs = 3;
  spec.options.disk_cache = false;
  spec.isolation = IsolationOptions{std::chrono::milliseconds(500)};
  return spec;
}

TEST(Isolation, CrashesHangsThrowsAndWrongResultsFailAloneAndTheBestIsChosen) {
  Tuned tuned(isolated_spec("isolated"));
  EXPECT_EQ(tuned(21), 42);
  const TuningReport report = *tuned.last_report();
  ASSERT_EQ(report.candidates.size(), 7u);
  EXPECT_NE(report.candidates[0].error.find("crashed (signal SIGABRT)"), std::string::npos);
  EXPECT_NE(report.candidates[1].error.find("crashed (signal SIGSEGV)"), std::string::npos);
  EXPECT_NE(report.candidates[2].error.find("timed out after 0.5 s"), std::string::npos);
  EXPECT_NE(report.candidates[3].error.find("this config is broken"), std::string::npos);
  EXPECT_NE(report.candidates[4].error.find("differs from the reference"), std::string::npos);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_TRUE(report.candidates[i].failed) << i;
  const CandidateResult& slow = report.candidates[5];
  const CandidateResult& fast = report.candidates[6];
  EXPECT_FALSE(slow.failed);
  EXPECT_FALSE(fast.failed);
  // Timed in the worker, around each run: a spin reads at least its length there, however
  // loaded the machine (load only lengthens a run, so no bound is put the other way).
  ASSERT_EQ(slow.samples.size(), 3u);
  ASSERT_EQ(fast.samples.size(), 3u);
  for (const double ms : slow.samples) EXPECT_GE(ms, 2.0);
  for (const double ms : fast.samples) EXPECT_GE(ms, 0.2);
  // The choice is the good candidate of the lower time the worker measured (which one that
  // is, a loaded machine may decide: the test does not).
  EXPECT_EQ(report.best, fast.agreed_ms < slow.agreed_ms ? 6u : 5u);
  // The caller keeps working: a hit, and a new key tunes again with new workers.
  EXPECT_EQ(tuned(21), 42);
  EXPECT_EQ(tuned(5), 10);
}

TEST(Isolation, TheWorkersInPlaceWritesNeverReachTheCaller) {
  using InPlace = Autotuned<ModeConfig, int, int(std::vector<int>*)>;
  InPlace::Spec spec;
  spec.identity = {"in_place", "v1"};
  spec.configs = {{Mode::slow}, {Mode::fast}};
  spec.key = [](std::vector<int>* const&) { return 0; };
  spec.launch = [](const ModeConfig& c, std::vector<int>* out) {
    run_mode(c.mode, 0);
    return ++(*out)[0];
  };
  spec.options.disk_cache = false;
  spec.isolation = IsolationOptions{};
  InPlace tuned(std::move(spec));
  std::vector<int> out{7};
  EXPECT_EQ(tuned(&out), 8);  // only the final run, in this process, wrote
  EXPECT_EQ(out[0], 8);
}

TEST(Isolation, RefusesATimerOfItsOwnAndANonPositiveTimeout) {
  Tuned::Spec spec = isolated_spec("refused");
  spec.options.timer = std::make_shared<CpuTimer>();
  EXPECT_THROW(Tuned{spec}, std::invalid_argument);
  Tuned::Spec zero = isolated_spec("zero");
  zero.isolation->candidate_timeout = std::chrono::milliseconds(0);
  Tuned tuned(std::move(zero));
  EXPECT_THROW(tuned(1), std::invalid_argument);
}

TEST(Isolation, EveryCandidateCrashingIsAnErrorThatSaysWhy) {
  Tuned::Spec spec = isolated_spec("all_crash");
  spec.configs = {{Mode::abort}, {Mode::segfault}};
  Tuned tuned(std::move(spec));
  try {
    tuned(1);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("SIGABRT"), std::string::npos) << text;
    EXPECT_NE(text.find("SIGSEGV"), std::string::npos) << text;
  }
}

// --- Processes a config starts (issue 26) -------------------------------------------------

enum class Spawn { sleepers, returners, hang_with_child, exits, too_many, plain };
struct SpawnConfig {
  Spawn spawn;
};
Value describe(const SpawnConfig& c) { return static_cast<int>(c.spawn); }

/// Appends this process's pid to `file` (one line; O_APPEND writes of a line do not mix).
void note_pid(const std::string& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  const std::string line = std::to_string(::getpid()) + "\n";
  if (fd >= 0) {
    (void)!::write(fd, line.data(), line.size());
    ::close(fd);
  }
}

[[noreturn]] void sleep_forever() {
  while (true) ::pause();
}

int run_spawn(Spawn spawn, const std::string& pids, int n) {
  switch (spawn) {
    case Spawn::sleepers:  // 40 children that never end
      for (int i = 0; i < 40; ++i) {
        if (::fork() == 0) {
          note_pid(pids);
          sleep_forever();
        }
      }
      break;
    case Spawn::returners:  // 40 children that return from the config, as the worker would
      for (int i = 0; i < 40; ++i) {
        if (::fork() == 0) {
          note_pid(pids);
          return n * 2;
        }
      }
      break;
    case Spawn::hang_with_child:
      if (::fork() == 0) note_pid(pids);
      sleep_forever();
    case Spawn::exits:
      std::exit(3);
    case Spawn::too_many:
      for (std::size_t i = 0; i <= detail::kMaxWorkerProcesses; ++i) {
        if (::fork() == 0) {
          note_pid(pids);
          sleep_forever();
        }
      }
      break;
    case Spawn::plain:
      break;
  }
  return n * 2;
}

/// Whether `pid` is still a live (not zombie) process.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const std::size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

TEST(Isolation, ProcessesAConfigStartsEndWithTheWorkerAndExitStatusesAreReported) {
  const fs::path pids = fs::temp_directory_path() / ("disttune-pids-" + std::to_string(::getpid()));
  fs::remove(pids);
  using Spawning = Autotuned<SpawnConfig, int, int(int)>;
  Spawning::Spec spec;
  spec.identity = {"spawning", "v1"};
  spec.configs = {{Spawn::sleepers}, {Spawn::returners}, {Spawn::hang_with_child},
                  {Spawn::exits},    {Spawn::too_many},  {Spawn::plain}};
  spec.key = [](const int& n) { return n; };
  spec.launch = [file = pids.string()](const SpawnConfig& c, int n) { return run_spawn(c.spawn, file, n); };
  spec.options.measurement.strategy = "exhaustive";
  spec.options.measurement.warmup_runs = 0;
  spec.options.measurement.timed_runs = 1;
  spec.options.disk_cache = false;
  spec.isolation = IsolationOptions{std::chrono::milliseconds(2000)};
  {
    Spawning tuned(std::move(spec));
    EXPECT_EQ(tuned(21), 42);
    const TuningReport report = *tuned.last_report();
    ASSERT_EQ(report.candidates.size(), 6u);
    EXPECT_FALSE(report.candidates[0].failed) << report.candidates[0].error;
    EXPECT_FALSE(report.candidates[1].failed) << report.candidates[1].error;
    EXPECT_NE(report.candidates[2].error.find("timed out after 2 s"), std::string::npos)
        << report.candidates[2].error;
    EXPECT_NE(report.candidates[3].error.find("the worker exited with status 3"), std::string::npos)
        << report.candidates[3].error;
    EXPECT_NE(report.candidates[4].error.find("started more than 256 processes"), std::string::npos)
        << report.candidates[4].error;
    EXPECT_FALSE(report.candidates[5].failed);
  }
  // The tuning is over: every process a config started is gone.
  std::ifstream lines(pids);
  std::vector<pid_t> started;
  for (long pid = 0; lines >> pid;) started.push_back(static_cast<pid_t>(pid));
  fs::remove(pids);
  EXPECT_GE(started.size(), 40u + 40u + 1u);
  std::size_t left = 0;
  for (const pid_t pid : started) left += alive(pid) ? 1 : 0;
  EXPECT_EQ(left, 0u) << "of " << started.size() << " processes the configs started";
}

}  // namespace
}  // namespace disttune
