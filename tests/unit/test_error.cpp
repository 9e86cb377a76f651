// Tests of the error hierarchy (error.hpp): one base, and the standard classes kept.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "disttune/communicator.hpp"
#include "disttune/context.hpp"
#include "disttune/error.hpp"
#include "disttune/function_tuner.hpp"
#include "disttune/measurement.hpp"

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
  FunctionTuner tuner({"all_fail", "v1"}, options);
  TuningRequest request;
  request.key = "[1]";
  request.candidates = {"{\"a\":1}", "{\"a\":2}"};
  request.run = [](std::size_t) { throw std::runtime_error("no such mode"); };
  try {
    (void)tuner.resolve(request);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(dynamic_cast<const TuningFailed*>(&error), nullptr);
    EXPECT_NE(std::string(error.what()).find("no such mode"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace disttune
