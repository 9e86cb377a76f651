// Contextual tuning names each candidate to the front end's prepare_ahead before it launches it,
// and tells the strategy the front end's compile threads.
#include <algorithm>
#include <cstddef>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/context.hpp"
#include "disttune/error.hpp"
#include "disttune/settings.hpp"
#include "disttune/strategy.hpp"
#include "keeps_compile_threads.hpp"
#include "said_timer.hpp"

namespace disttune {
namespace {

/// `count` candidates {"b":i,"w":j}: a 2-knob grid whose cost is lowest near (12, 3).
std::vector<std::string> grid(std::size_t count) {
  std::vector<std::string> texts;
  for (std::size_t i = 0; texts.size() < count; ++i) {
    for (std::size_t j = 0; j < 8 && texts.size() < count; ++j)
      texts.push_back(R"({"b":)" + std::to_string(i) + R"(,"w":)" + std::to_string(j) + "}");
  }
  return texts;
}

double cost_ms(std::size_t candidate) {
  const double b = static_cast<double>(candidate / 8), w = static_cast<double>(candidate % 8);
  return 1.0 + 0.01 * ((b - 12.0) * (b - 12.0) + (w - 3.0) * (w - 3.0));
}

/// What one contextual tuning of `count` candidates with `strategy` named ahead, and launched.
struct Prepared {
  std::vector<std::size_t> named;     ///< in the order named, as prepare_ahead heard them
  std::vector<std::size_t> launched;  ///< every launch during tuning, in order
  bool launched_before_named = false;
  std::string choice_line;  ///< the log's line of the choice
};

Prepared tune(std::size_t count, const std::string& strategy, bool give_prepare_ahead = true) {
  auto timer = std::make_shared<testing::SaidTimer>();
  ContextOptions options;
  options.n_warmup = 1;
  options.n_repeat = 2;
  options.timer = timer;
  options.strategy = strategy;
  options.log_dir = ::testing::TempDir();
  KernelTuningState kernel("prepared");
  const std::vector<std::string> candidates = grid(count);
  Prepared seen;
  std::set<std::size_t> named;
  ContextualAutotuner tuner("prepared_outer", options);
  tuner.run([&] {
    const PrepareAhead prepare = [&](const std::vector<std::size_t>& ahead) {
      for (std::size_t c : ahead) {
        seen.named.push_back(c);
        named.insert(c);
      }
    };
    ContextualAutotuner::active()->launch(
        kernel, "[4096]", candidates,
        [&](std::size_t i) {
          if (!kernel.cached_index("[4096]", candidates)) {
            seen.launched.push_back(i);
            if (!named.count(i)) seen.launched_before_named = true;
          }
          timer->said_ms = cost_ms(i);
        },
        give_prepare_ahead ? prepare : PrepareAhead{});
  });
  std::ifstream log(tuner.log_path());
  for (std::string line; std::getline(log, line);) {
    if (line.find("best-config-id") != std::string::npos) seen.choice_line = line;
  }
  return seen;
}

TEST(ContextPrepare, EveryCandidateIsNamedBeforeItsFirstLaunchAndOnlyOnceAsAhead) {
  const Prepared exhaustive = tune(24, "exhaustive");
  EXPECT_FALSE(exhaustive.launched_before_named);
  // The whole space is the first round: named in order, each once, at the first launch.
  std::vector<std::size_t> all(24);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  EXPECT_EQ(exhaustive.named, all);
}

TEST(ContextPrepare, TheSearchNamesWhatItMeasuresNotTheWholeSpace) {
  const Prepared search = tune(400, "search");
  EXPECT_FALSE(search.launched_before_named);
  const std::set<std::size_t> named(search.named.begin(), search.named.end());
  const std::set<std::size_t> launched(search.launched.begin(), search.launched.end());
  EXPECT_EQ(named.size(), search.named.size()) << "a candidate was named twice";
  // Its budget (4.5% of 400 is 18; the default effort's fewest, 45) and the guesses it names
  // ahead (at most 0.6 of the budget): at most 18% of the space, not 400 compiles.
  EXPECT_GE(launched.size(), 45u);
  EXPECT_LE(named.size(), 72u);
  EXPECT_TRUE(std::includes(named.begin(), named.end(), launched.begin(), launched.end()));
  // The log's choice line says what was compiled against what was measured.
  EXPECT_NE(search.choice_line.find(" | compiled: " + std::to_string(named.size()) + " of 400 | measured: " +
                                    std::to_string(launched.size())),
            std::string::npos)
      << search.choice_line;
}

TEST(ContextPrepare, WithoutAPrepareAheadTheTuningRunsAsBefore) {
  const Prepared with = tune(24, "exhaustive"), without = tune(24, "exhaustive", false);
  EXPECT_TRUE(without.named.empty());
  EXPECT_EQ(with.launched, without.launched);
  EXPECT_EQ(without.choice_line.find("compiled:"), std::string::npos) << without.choice_line;
}

/// The compile threads the strategy of one contextual tuning was told, with `threads` given.
std::size_t told_compile_threads(std::optional<std::size_t> threads) {
  static std::size_t told = 0;
  static const bool registered = [] {
    register_strategy("test_context_keeps_compile_threads",
                      [](const Measurement&) { return std::make_unique<testing::KeepsCompileThreads>(told); });
    return true;
  }();
  (void)registered;
  ContextOptions options;
  options.n_warmup = 0;
  options.n_repeat = 1;
  options.timer = std::make_shared<testing::SaidTimer>();
  options.strategy = "test_context_keeps_compile_threads";
  options.log_dir = ::testing::TempDir();
  options.compile_threads = threads;
  KernelTuningState kernel("threads");
  ContextualAutotuner tuner("threads_outer", options);
  tuner.run([&] { ContextualAutotuner::active()->launch(kernel, "[1]", grid(4), [](std::size_t) {}); });
  return told;
}

TEST(ContextPrepare, TheStrategyIsToldTheFrontEndsCompileThreads) {
  EXPECT_EQ(told_compile_threads(6), 6u);
  // Not given: the process's compile pool, the one the Python front end compiles on.
  EXPECT_EQ(told_compile_threads(std::nullopt), compile_threads_setting());
  ContextOptions none;
  none.compile_threads = 0;
  EXPECT_THROW(ContextualAutotuner("zero_threads", none), InvalidSetting);
}

}  // namespace
}  // namespace disttune
