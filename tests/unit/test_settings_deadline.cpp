// Tests of collective deadlines (deadline.hpp): one rule for seconds, and saturating now + timeout.
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "disttune/deadline.hpp"
#include "disttune/error.hpp"

namespace disttune {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(TimeoutFromSeconds, RoundsToMilliseconds) {
  EXPECT_EQ(timeout_from_seconds(2.0, "t"), 2000ms);
  EXPECT_EQ(timeout_from_seconds(0.001, "t"), 1ms);
  EXPECT_EQ(timeout_from_seconds(0.0015, "t"), 2ms);
  EXPECT_EQ(timeout_from_seconds(1e10, "t"), std::chrono::milliseconds(10'000'000'000'000LL));
}

TEST(TimeoutFromSeconds, InfinityAndWhatMillisecondsCannotCountMeanNoDeadline) {
  EXPECT_EQ(timeout_from_seconds(std::numeric_limits<double>::infinity(), "t"), kNoDeadline);
  EXPECT_EQ(timeout_from_seconds(1e300, "t"), kNoDeadline);
  EXPECT_EQ(timeout_from_seconds(9.3e15, "t"), kNoDeadline);  // > 2^63 ms
}

TEST(TimeoutFromSeconds, UnderOneMillisecondIsAnErrorNamingTheSetting) {
  for (double bad : {1e-9, 0.0004, 0.0, -1.0, -std::numeric_limits<double>::infinity(),
                     std::nan("")}) {
    try {
      (void)timeout_from_seconds(bad, "collective_timeout_s");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InvalidSetting& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("collective_timeout_s must be positive"), std::string::npos) << message;
      EXPECT_NE(message.find("0.001"), std::string::npos) << message;
    }
  }
}

TEST(ValidateTimeout, RefusesLessThanOneMillisecond) {
  EXPECT_NO_THROW(validate_timeout(1ms, "collective_timeout"));
  EXPECT_NO_THROW(validate_timeout(kNoDeadline, "collective_timeout"));
  EXPECT_THROW(validate_timeout(0ms, "collective_timeout"), InvalidSetting);
  EXPECT_THROW(validate_timeout(-5ms, "collective_timeout"), InvalidSetting);
}

TEST(DeadlineAfter, AddsAnOrdinaryTimeout) {
  const Clock::time_point before = Clock::now();
  const Clock::time_point deadline = deadline_after(2s);
  EXPECT_GE(deadline, before + 2s);
  EXPECT_LE(deadline, Clock::now() + 2s);
  // Bracketed by the clock, not by a guess of how long a line takes: a loaded machine that
  // stalls between the lines moves the brackets with it.
  const Clock::time_point asked = Clock::now();
  const double left = seconds_until(deadline);
  const Clock::time_point answered = Clock::now();
  EXPECT_LE(left, std::chrono::duration<double>(deadline - asked).count());
  EXPECT_GE(left, std::chrono::duration<double>(deadline - answered).count());
  EXPECT_LE(left, 2.0);
}

TEST(DeadlineAfter, SaturatesInsteadOfOverflowing) {
  // now() + 1e10 s overflows a steady_clock time point (nanoseconds in 64 bits).
  const auto huge = std::chrono::milliseconds(10'000'000'000'000LL);
  EXPECT_EQ(deadline_after(huge), Clock::time_point::max());
  EXPECT_EQ(deadline_after(kNoDeadline), Clock::time_point::max());
  EXPECT_GT(deadline_after(huge), Clock::now());
  EXPECT_EQ(seconds_until(Clock::time_point::max()), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace disttune
