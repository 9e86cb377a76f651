// Tests of the sink (sink.hpp): a redirected sink receives tables, log lines and warnings;
// stderr stays quiet; the default writes them to stderr as before.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/function_tuner.hpp"
#include "disttune/sink.hpp"

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

}  // namespace
}  // namespace disttune
