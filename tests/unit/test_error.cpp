// Tests of the error hierarchy (error.hpp): one base, and the standard classes kept.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/communicator.hpp"
#include "disttune/context.hpp"
#include "disttune/error.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/measurement.hpp"
#include "disttune/strategy.hpp"
#include "said_timer.hpp"

namespace disttune {
namespace {

template <class Thrown, class Caught>
bool caught_as(const Thrown& error) {
  try {
    throw error;
  } catch (const Caught& caught) {
    return std::string(caught.what()) == "disttune: it";
  } catch (...) {
    return false;
  }
}

TEST(Error, EveryNamedErrorIsADisttuneErrorAndItsStandardClass) {
  EXPECT_TRUE((caught_as<InvalidSetting, Error>(InvalidSetting("disttune: it"))));
  EXPECT_TRUE((caught_as<InvalidSetting, std::invalid_argument>(InvalidSetting("disttune: it"))));
  EXPECT_TRUE((caught_as<TuningFailed, Error>(TuningFailed("disttune: it"))));
  EXPECT_TRUE((caught_as<TuningFailed, std::runtime_error>(TuningFailed("disttune: it"))));
  EXPECT_TRUE((caught_as<CollectiveTimeout, Error>(CollectiveTimeout("disttune: it"))));
  EXPECT_TRUE((caught_as<CollectiveTimeout, std::runtime_error>(CollectiveTimeout("disttune: it"))));
  EXPECT_TRUE((caught_as<RankDisagreement, Error>(RankDisagreement("disttune: it"))));
  EXPECT_TRUE((caught_as<ContextualRunActive, Error>(ContextualRunActive("disttune: it"))));
  EXPECT_TRUE((caught_as<ContextualRunActive, std::logic_error>(ContextualRunActive("disttune: it"))));
  // One std::exception base: a catch of std::exception is not ambiguous.
  EXPECT_TRUE((caught_as<CollectiveTimeout, std::exception>(CollectiveTimeout("disttune: it"))));
  EXPECT_TRUE((caught_as<InvalidSetting, std::exception>(InvalidSetting("disttune: it"))));
}

TEST(Error, BadSettingsAreInvalidSettingNamingTheSetting) {
  Measurement measurement;
  measurement.timed_runs = 0;
  try {
    validate(measurement);
    FAIL() << "timed_runs=0 accepted";
  } catch (const InvalidSetting& error) {
    EXPECT_NE(std::string(error.what()).find("timed_runs must be between 1 and 1000000, got 0"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(validate_run_count(1'000'001, "n_repeat", 1), InvalidSetting);
  EXPECT_THROW(validate_run_count(1LL << 40, "timed_runs", 1), InvalidSetting);
  EXPECT_THROW(parse_statistic("mode"), InvalidSetting);
  ContextOptions options;
  options.n_warmup = -1;
  EXPECT_THROW(ContextualAutotuner("f", options), InvalidSetting);
}

TEST(Error, EveryConfigFailingIsTuningFailed) {
  TunerOptions options;
  options.disk_cache = false;
  options.timer = std::make_shared<testing::SaidTimer>();  // its clocks(): nothing discarded
  FunctionTuner tuner({"all_fail", "v1"}, options);
  TuningRequest request;
  request.key = "[1]";
  request.candidates = {"{\"a\":1}", "{\"a\":2}"};
  // A reason of several lines (a Python failure: its summary, then the traceback).
  request.run = [](std::size_t) { throw std::runtime_error("no such mode\nTraceback:\n  File x.py, line 3"); };
  try {
    (void)tuner.resolve(request);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(dynamic_cast<const TuningFailed*>(&error), nullptr);
    EXPECT_EQ(std::string(error.what()),
              "disttune: every config of 'all_fail' failed for key [1]:\n"
              "  [0] {\"a\":1}: no such mode\n"
              "  [1] {\"a\":2}: no such mode\n"
              "  no log was written (no cache directory); a verbose call prints each failure in full");
  }
}

TEST(Error, EveryConfigFailingNamesTheLogThatHoldsEachFailureInFull) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("disttune-error-log-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  TunerOptions options;
  options.cache_root = root;
  options.timer = std::make_shared<testing::SaidTimer>();
  FunctionTuner tuner({"all_fail_logged", "v1"}, options);
  TuningRequest request;
  request.key = "[1]";
  request.candidates = {"{\"a\":1}"};
  request.run = [](std::size_t) { throw std::runtime_error("no such mode\nTraceback:\n  File x.py, line 3"); };
  try {
    (void)tuner.resolve(request);
    FAIL() << "no error";
  } catch (const TuningFailed& error) {
    const std::string what = error.what();
    const std::string named = "\n  each failure in full (tracebacks too) is in the log ";
    const std::size_t at = what.find(named);
    ASSERT_NE(at, std::string::npos) << what;
    EXPECT_EQ(what.substr(0, at), "disttune: every config of 'all_fail_logged' failed for key [1]:\n"
                                  "  [0] {\"a\":1}: no such mode");
    std::ifstream log(what.substr(at + named.size()));
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("candidate 0 {\"a\":1} failed: no such mode\nTraceback:\n  File x.py, line 3"),
              std::string::npos)
        << text;
  }
  std::filesystem::remove_all(root);
}

/// Measures candidates 0 and 1, then 2 and 3, and names 2 and 3 the finalists (the others
/// are no longer contenders, as a warm start's race leaves its probe behind).
class LaterFinalists final : public Strategy {
 public:
  Round first_round(std::size_t) override { return Round{{0, 1}, 0, 1}; }
  Round next_round(const std::vector<CandidateStanding>&) override {
    if (rounds_++ == 0) return Round{{2, 3}, 0, 1};
    return Round{{2, 3}, 0, 0};
  }

 private:
  int rounds_ = 0;
};

TEST(Error, EveryFinalistFailingNamesTheFailedAndWhatTheTimerDiscarded) {
  register_strategy("test_later_finalists", [](const Measurement&) { return std::make_unique<LaterFinalists>(); });
  auto timer = std::make_shared<testing::SaidTimer>();
  timer->said_clocks = Value{{"gapped_runs", 22}, {"discarded_runs", 0}};
  TunerOptions options;
  options.disk_cache = false;
  options.timer = timer;
  options.measurement.strategy = "test_later_finalists";
  options.measurement.timed_runs = 2;
  FunctionTuner tuner({"race", "v1"}, options);
  TuningRequest request;
  request.key = "[192]";
  request.candidates = {"{\"a\":1}", "{\"a\":2}", "{\"a\":3}", "{\"a\":4}", "{\"a\":5}"};
  // 2 and 3 time as no time at all (a timer that discarded their runs): past their re-takes
  // they fail.
  request.run = [&](std::size_t i) { timer->said_ms = i >= 2 ? std::numeric_limits<double>::quiet_NaN() : 1.0; };
  try {
    (void)tuner.resolve(request);
    FAIL() << "no error";
  } catch (const TuningFailed& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("every finalist of 'race' failed for key [192] (2 of 5 configs failed):"), std::string::npos)
        << what;
    EXPECT_NE(what.find("[2] {\"a\":3}: more than 2 invalid times"), std::string::npos) << what;
    EXPECT_NE(what.find("[3] {\"a\":4}: more than 2 invalid times"), std::string::npos) << what;
    EXPECT_EQ(what.find("[0]"), std::string::npos) << what;  // only the failed are listed
    EXPECT_NE(what.find("not finalists: 2 measured without failing, 1 never run"), std::string::npos) << what;
    EXPECT_NE(what.find("the timer discarded 22 runs the host stalled inside and 0 at a slow clock"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace disttune
