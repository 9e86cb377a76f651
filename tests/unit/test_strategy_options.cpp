// Tests of strategy options (src/strategies/strategy_options.cpp, the registry's effective
// options): one canonical text per value.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/error.hpp"
#include "disttune/strategy.hpp"
#include "disttune/strategy_option.hpp"

namespace disttune {
namespace {

using Options = std::map<std::string, std::string>;

Measurement with(const std::string& strategy, Options options) {
  Measurement m;
  m.strategy = strategy;
  m.strategy_options = std::move(options);
  return m;
}

/// The InvalidSetting text of reading `options` for `strategy`, or "" if they are accepted.
std::string refusal(const std::string& strategy, Options options) {
  try {
    (void)effective_strategy_options(with(strategy, std::move(options)));
  } catch (const InvalidSetting& error) {
    return error.what();
  }
  return "";
}

TEST(StrategyOptions, ANumberHasOneTextWhateverItsSpelling) {
  const StrategyOption noise = StrategyOption::proportion("max_noise", 0.005);
  for (const char* spelling : {"0.005", "5e-3", "0.0050", "5E-3", "0.5e-2"})
    EXPECT_EQ(canonical_option_text("converge", noise, spelling), "0.005") << spelling;
  const StrategyOption time = StrategyOption::number("min_time_ms", 0.5, 0.0);
  EXPECT_EQ(canonical_option_text("converge", time, "-0"), "0");
  EXPECT_EQ(canonical_option_text("converge", time, "0.0"), "0");
  EXPECT_EQ(canonical_option_text("converge", time, "1e3"), "1000");
}

TEST(StrategyOptions, AnIntegerHasOneTextAndASeedReadsToTwoToThe64) {
  const StrategyOption batch = StrategyOption::integer("batch", 4, 1, 4096);
  EXPECT_EQ(canonical_option_text("search", batch, "007"), "7");
  EXPECT_EQ(canonical_option_text("search", StrategyOption::seed(), "18446744073709551615"),
            "18446744073709551615");
  EXPECT_EQ(canonical_option_text("search", StrategyOption::seed(), "00"), "0");
}

TEST(StrategyOptions, AValueAnOptionDoesNotAcceptIsRefusedNamingItAndWhatItTakes) {
  const auto error = [](const StrategyOption& option, const std::string& text) -> std::string {
    try {
      (void)canonical_option_text("mine", option, text);
    } catch (const InvalidSetting& refused) {
      return refused.what();
    }
    return "";
  };
  EXPECT_EQ(error(StrategyOption::proportion("max_noise", 0.005), "1"),
            "disttune: strategy 'mine' option max_noise must be a number in (0, 1), got '1'");
  EXPECT_EQ(error(StrategyOption::integer("batch", 4, 1, 4096), "2.5"),
            "disttune: strategy 'mine' option batch must be an integer in [1, 4096], got '2.5'");
  EXPECT_EQ(error(StrategyOption::seed(), "-1"),
            "disttune: strategy 'mine' option seed must be an unsigned integer, got '-1'");
  EXPECT_EQ(error(StrategyOption::number("scale", 1.0), "nan"),
            "disttune: strategy 'mine' option scale must be a finite number, got 'nan'");
  EXPECT_EQ(error(StrategyOption::text("mode", "a", {"a", "b"}), "c"),
            "disttune: strategy 'mine' option mode must be one of a, b, got 'c'");
  EXPECT_EQ(error(StrategyOption::number("budget_ms", 0.0, 0.0), " 1"),
            "disttune: strategy 'mine' option budget_ms must be a finite number >= 0, got ' 1'");
}

TEST(StrategyOptions, ConvergeReadsTheSameSettingsSpelledAnyWayToTheSameOptions) {
  const Options defaults = effective_strategy_options(with("converge", {}));
  EXPECT_EQ(
      defaults,
      (Options{{"budget_ms", "0"}, {"max_noise", "0.005"}, {"min_time_ms", "0.5"}, {"seed", "0"}}));
  EXPECT_EQ(effective_strategy_options(with("converge", {{"max_noise", "0.005"}})), defaults);
  EXPECT_EQ(effective_strategy_options(with("converge", {{"max_noise", "5e-3"}, {"seed", "000"}})),
            defaults);
  EXPECT_EQ(
      effective_strategy_options(with("converge", {{"budget_ms", "0.0"}, {"min_time_ms", ".5e0"}}))
          .at("min_time_ms"),
      "0.5");
  EXPECT_NE(effective_strategy_options(with("converge", {{"max_noise", "0.01"}})), defaults);
}

TEST(StrategyOptions, AnOptionWithoutADefaultStaysAbsentUnlessGiven) {
  // search's fraction: absent means "the effort's", which no number equals.
  const Options defaults = effective_strategy_options(with("search", {}));
  EXPECT_EQ(defaults.count("fraction"), 0u);
  EXPECT_EQ(defaults.at("effort"), "default");
  EXPECT_EQ(defaults.at("batch"), "4");
  EXPECT_EQ(defaults.at("max_noise"), "0.005");
  EXPECT_EQ(effective_strategy_options(with("search", {{"fraction", "5e-2"}})).at("fraction"),
            "0.05");
  EXPECT_EQ(effective_strategy_options(with("random", {{"batch", "08"}})).at("batch"), "8");
}

TEST(StrategyOptions, EffectiveOptionsRefuseWhatMakingTheStrategyRefuses) {
  EXPECT_EQ(refusal("exhaustive", {{"max_noise", "0.01"}}),
            "disttune: strategy 'exhaustive' has no option 'max_noise' (its options: seed)");
  EXPECT_NE(refusal("search", {{"effort", "huge"}})
                .find("effort must be one of quick, default, thorough"),
            std::string::npos);
  EXPECT_NE(refusal("no-such-strategy", {}).find("unknown strategy 'no-such-strategy'"),
            std::string::npos);
  EXPECT_EQ(refusal("adaptive", {{"seed", "3"}}), "");
}

/// Keeps the options its factory was given.
class Recording final : public Strategy {
 public:
  explicit Recording(const Measurement& m) { seen = m.strategy_options; }
  Round first_round(std::size_t count) override { return {{count - 1}, 0, 1}; }
  Round next_round(const std::vector<CandidateStanding>&) override { return {}; }
  static inline Options seen;
};

TEST(StrategyOptions, ADeclaringStrategyGetsEveryOptionReadAndRefusesOthers) {
  register_strategy("declares-options",
                    {StrategyOption::seed(), StrategyOption::number("threshold", 0.25, 0.0, 1.0),
                     StrategyOption::text("mode", std::nullopt, {"fast", "slow"})},
                    [](const Measurement& m) { return std::make_unique<Recording>(m); });
  (void)make_strategy(with("declares-options", {{"threshold", "2.5e-1"}}));
  EXPECT_EQ(Recording::seen, (Options{{"seed", "0"}, {"threshold", "0.25"}}));
  (void)make_strategy(with("declares-options", {{"mode", "slow"}, {"seed", "9"}}));
  EXPECT_EQ(Recording::seen, (Options{{"mode", "slow"}, {"seed", "9"}, {"threshold", "0.25"}}));
  EXPECT_EQ(effective_strategy_options(with("declares-options", {{"threshold", "0.250"}})),
            effective_strategy_options(with("declares-options", {})));
  try {
    (void)make_strategy(with("declares-options", {{"treshold", "0.3"}}));
    ADD_FAILURE() << "an undeclared option was accepted";
  } catch (const InvalidSetting& error) {
    EXPECT_STREQ(error.what(),
                 "disttune: strategy 'declares-options' has no option 'treshold' "
                 "(its options: seed, threshold, mode)");
  }
  EXPECT_THROW((void)make_strategy(with("declares-options", {{"threshold", "2"}})), InvalidSetting);
}

TEST(StrategyOptions, ATableWithATwiceNamedOptionOrABadDefaultIsRefusedAtRegistration) {
  const StrategyFactory factory = [](const Measurement& m) {
    return std::make_unique<Recording>(m);
  };
  EXPECT_THROW(
      register_strategy("twice", {StrategyOption::seed(), StrategyOption::seed()}, factory),
      std::invalid_argument);
  try {
    register_strategy("bad-default", {StrategyOption::integer("batch", 0, 1, 8)}, factory);
    ADD_FAILURE() << "a default out of its option's range was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what())
                  .find("option batch must be an integer in [1, 8], got '0' (its default)"),
              std::string::npos)
        << error.what();
  }
  const std::vector<std::string> names = registered_strategies();
  EXPECT_EQ(std::count(names.begin(), names.end(), "twice") +
                std::count(names.begin(), names.end(), "bad-default"),
            0);
}

TEST(StrategyOptions, AStrategyRegisteredWithoutATableGetsTheTextsAsGiven) {
  register_strategy("undeclared",
                    [](const Measurement& m) { return std::make_unique<Recording>(m); });
  const Options given{{"anything", "5e-3"}};
  EXPECT_EQ(effective_strategy_options(with("undeclared", given)), given);
  (void)make_strategy(with("undeclared", given));
  EXPECT_EQ(Recording::seen, given);
}

}  // namespace
}  // namespace disttune
