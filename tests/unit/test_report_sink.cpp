// Tests of the sink (sink.hpp): a redirected sink receives tables, log lines and warnings;
// stderr stays quiet; the default writes them to stderr as before.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/function_tuner.hpp"
#include "disttune/sink.hpp"
#include "report/progress.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;

/// Keeps every message it receives.
class RecordingSink final : public Sink {
 public:
  void write(MessageKind kind, std::string_view text) override {
    std::lock_guard lock(mutex_);
    messages_.emplace_back(kind, std::string(text));
  }
  std::vector<std::string> of(MessageKind kind) const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> texts;
    for (const auto& [k, text] : messages_) {
      if (k == kind) texts.push_back(text);
    }
    return texts;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<MessageKind, std::string>> messages_;
};

class SinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE");
    ::unsetenv("TRITON_DIST_AUTOTUNE_STRATEGY");
    root_ = fs::temp_directory_path() / ("disttune-sink-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override {
    set_sink(nullptr);
    std::error_code ignored;
    fs::permissions(root_, fs::perms::owner_all, ignored);
    fs::remove_all(root_, ignored);
  }

  /// A verbose tuning of two candidates in a cache root that others may write (refused with
  /// a warning, so the tuning stays in memory).
  TuningReport tune_verbosely(const std::string& function) {
    fs::create_directories(root_);
    fs::permissions(root_, fs::perms::all);  // 0777: refused, with a warning
    TunerOptions options;
    options.cache_root = root_;
    FunctionTuner tuner({function, "v1"}, options);
    TuningRequest request;
    request.key = "[3]";
    request.candidates = {"{\"a\":1}", "{\"a\":2}"};
    request.run = [](std::size_t) {};
    request.verbose = true;
    return tuner.resolve(request);
  }

  fs::path root_;
};

TEST_F(SinkTest, ARedirectedSinkGetsTheTableTheLogAndTheWarningsAndStderrStaysQuiet) {
  auto sink = std::make_shared<RecordingSink>();
  set_sink(sink);
  EXPECT_EQ(current_sink(), sink);
  ::testing::internal::CaptureStderr();
  const TuningReport report = tune_verbosely("sink_redirected");
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(printed, "");
  const std::vector<std::string> tables = sink->of(MessageKind::table);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0], format_table(report));
  EXPECT_FALSE(sink->of(MessageKind::log).empty());
  const std::vector<std::string> warnings = sink->of(MessageKind::warning);
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find(root_.string()), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings[0].rfind("disttune: ", 0), std::string::npos);  // no prefix: the sink's choice
}

TEST_F(SinkTest, TheDefaultSinkWritesToStderr) {
  set_sink(nullptr);
  ::testing::internal::CaptureStderr();
  const TuningReport report = tune_verbosely("sink_default");
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find(format_table(report)), std::string::npos) << printed;
  EXPECT_NE(printed.find("disttune: key [3]"), std::string::npos) << printed;
}

TEST_F(SinkTest, ASinkThatThrowsHasItsMessageReportedOnStderr) {
  class ThrowingSink final : public Sink {
   public:
    void write(MessageKind, std::string_view) override { throw std::runtime_error("sink is full"); }
  };
  set_sink(std::make_shared<ThrowingSink>());
  ::testing::internal::CaptureStderr();
  const TuningReport report = tune_verbosely("sink_throws");
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("the output sink failed (sink is full)"), std::string::npos) << printed;
  EXPECT_NE(printed.find(format_table(report)), std::string::npos) << printed;
}

TEST_F(SinkTest, AVariableThatIsNoSettingIsOneWarningNamingTheClosestOne) {
  auto sink = std::make_shared<RecordingSink>();
  set_sink(sink);
  ::setenv("TRITON_DIST_AUTOTUNE_WARMUP", "abc", 1);
  TunerOptions options;
  options.disk_cache = false;
  FunctionTuner first({"sink_unknown_setting", "v1"}, options);
  FunctionTuner second({"sink_unknown_setting", "v1"}, options);  // once per process
  ::unsetenv("TRITON_DIST_AUTOTUNE_WARMUP");
  EXPECT_EQ(sink->of(MessageKind::warning),
            std::vector<std::string>{"TRITON_DIST_AUTOTUNE_WARMUP is not a disttune setting and is ignored; did "
                                     "you mean TRITON_DIST_AUTOTUNE_WARM_START? (docs/settings.md lists them)"});
}

TEST(ProgressText, SaysTheRoundTheCandidateTheTimeSpentAndAnEstimateOfTheTimeLeft) {
  EXPECT_EQ(detail::progress_text("scale", 1, 0, 8, 0, 1.04), "scale: round 1, candidate 1/8, 1.0 s elapsed, "
                                                              "estimating the time left");
  // 4 candidates ran in 10 s: the 4 never run take about 10 s more.
  EXPECT_EQ(detail::progress_text("scale", 2, 4, 8, 4, 10.0), "scale: round 2, candidate 5/8, 10.0 s elapsed, "
                                                              "about 10.0 s left");
  EXPECT_EQ(detail::progress_text("scale", 3, 7, 8, 8, 250.0), "scale: round 3, candidate 8/8, 250 s elapsed, "
                                                               "about 0.0 s left");
}

/// The messages of `kind` that a tuning of three candidates taking 0.6 s a run sends.
std::vector<std::string> progress_of_a_slow_tuning(bool verbose, MessageKind kind) {
  auto sink = std::make_shared<RecordingSink>();
  set_sink(sink);
  TunerOptions options;
  options.disk_cache = false;
  options.measurement.strategy = "exhaustive";
  options.measurement.warmup_runs = 0;
  options.measurement.timed_runs = 1;
  FunctionTuner tuner({"slow", "v1"}, options);
  TuningRequest request;
  request.key = "[1]";
  request.candidates = {"{\"a\":1}", "{\"a\":2}", "{\"a\":3}"};
  request.run = [](std::size_t) { std::this_thread::sleep_for(std::chrono::milliseconds(600)); };
  request.verbose = verbose;
  (void)tuner.resolve(request);
  set_sink(nullptr);
  std::vector<std::string> shown;
  for (const std::string& text : sink->of(kind)) {
    if (text.rfind("slow: round ", 0) == 0) shown.push_back(text);
  }
  return shown;
}

TEST_F(SinkTest, AVerboseLongTuningLogsItsProgressOnOrOffATerminal) {
  // The run of candidate 3 starts after 1.2 s: past the quiet first second.
  const std::vector<std::string> lines = progress_of_a_slow_tuning(true, MessageKind::log);
  ASSERT_FALSE(lines.empty());
  const std::string& last = lines.back();
  EXPECT_EQ(last.rfind("slow: round 1, candidate 3/3, ", 0), 0u) << last;
  EXPECT_NE(last.find(" s elapsed, about "), std::string::npos) << last;
  EXPECT_EQ(last.substr(last.size() - 7), " s left") << last;
}

TEST_F(SinkTest, AQuietLongTuningShowsItsProgressInPlace) {
  const std::vector<std::string> shown = progress_of_a_slow_tuning(false, MessageKind::progress);
  ASSERT_FALSE(shown.empty());
  EXPECT_EQ(shown.back().rfind("slow: round 1, candidate 3/3, ", 0), 0u) << shown.back();
  EXPECT_NE(shown.back().find(" s elapsed, about "), std::string::npos) << shown.back();
}

}  // namespace
}  // namespace disttune
