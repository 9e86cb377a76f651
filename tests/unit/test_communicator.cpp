// Tests of collective/communicator.cpp: contexts, the single-process and callback communicators, and
// the default collective deadline (TRITON_DIST_AUTOTUNE_TIMEOUT).
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/communicator.hpp"

namespace disttune {
namespace {

using namespace std::chrono_literals;

CollectiveContext context_of(std::string phase) {
  return CollectiveContext{std::move(phase), "scale", "[1024]", 3,
                           std::chrono::steady_clock::now() + 1s};
}

TEST(CollectiveContext, DescribesPhaseFunctionKeyAndCandidate) {
  EXPECT_EQ(context_of("barrier").describe(),
            "phase 'barrier' of function 'scale', key [1024], candidate 3");
  CollectiveContext vote{"cache vote", "scale", "[1024]", std::nullopt, {}};
  EXPECT_EQ(vote.describe(), "phase 'cache vote' of function 'scale', key [1024]");
}

TEST(SingleProcessCommunicator, IsRankZeroOfOneAndLeavesDataAlone) {
  SingleProcessCommunicator comm;
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  EXPECT_EQ(comm.local_rank(), 0);
  std::vector<double> values{3.0, -1.0};
  comm.all_reduce_max(values, context_of("reduce"));
  EXPECT_EQ(values, (std::vector<double>{3.0, -1.0}));
  EXPECT_EQ(comm.all_gather("abc", context_of("gather")), std::vector<std::string>{"abc"});
}

/// Callbacks that record what they were called with and act as rank 1 of 3 on node-local rank 0.
struct Recorder {
  std::vector<std::string> calls;
  CommunicatorCallbacks callbacks() {
    CommunicatorCallbacks c;
    c.rank = 1;
    c.size = 3;
    c.local_rank = 0;
    c.barrier = [this](const CollectiveContext& context) { calls.push_back("barrier " + context.phase); };
    c.all_reduce_max = [this](std::span<double> values, const CollectiveContext& context) {
      calls.push_back("max " + context.phase);
      for (double& value : values) value = 100.0;
    };
    c.all_gather = [this](const std::string& bytes, const CollectiveContext& context) {
      calls.push_back("gather " + context.phase);
      return std::vector<std::string>{"r0", bytes, "r2"};
    };
    return c;
  }
};

TEST(CallbackCommunicator, ForwardsEveryCollectiveWithItsContext) {
  Recorder recorder;
  auto comm = make_callback_communicator(recorder.callbacks());
  EXPECT_EQ(comm->rank(), 1);
  EXPECT_EQ(comm->size(), 3);
  EXPECT_EQ(comm->local_rank(), 0);
  comm->barrier(context_of("b"));
  std::vector<double> values{1.0, 2.0};
  comm->all_reduce_max(values, context_of("x"));
  EXPECT_EQ(values, (std::vector<double>{100.0, 100.0}));
  EXPECT_EQ(comm->all_gather("mine", context_of("g")), (std::vector<std::string>{"r0", "mine", "r2"}));
  EXPECT_EQ(recorder.calls, (std::vector<std::string>{"barrier b", "max x", "gather g"}));
}

TEST(CallbackCommunicator, RejectsAnAllGatherWithTheWrongNumberOfParts) {
  Recorder recorder;
  CommunicatorCallbacks callbacks = recorder.callbacks();
  callbacks.all_gather = [](const std::string& bytes, const CollectiveContext&) {
    return std::vector<std::string>{bytes};
  };
  auto comm = make_callback_communicator(std::move(callbacks));
  try {
    (void)comm->all_gather("x", context_of("g"));
    FAIL() << "one part for three ranks was accepted";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("1 parts for 3 ranks"), std::string::npos) << error.what();
  }
}

TEST(CallbackCommunicator, PassesTheCallbacksErrorsThrough) {
  Recorder recorder;
  CommunicatorCallbacks callbacks = recorder.callbacks();
  callbacks.barrier = [](const CollectiveContext& context) {
    throw CollectiveTimeout("late: " + context.describe());
  };
  auto comm = make_callback_communicator(std::move(callbacks));
  EXPECT_THROW(comm->barrier(context_of("b")), CollectiveTimeout);
}

TEST(CallbackCommunicator, NamesTheMissingCallback) {
  for (const char* missing : {"barrier", "all_reduce_max", "all_gather"}) {
    Recorder recorder;
    CommunicatorCallbacks callbacks = recorder.callbacks();
    if (std::string(missing) == "barrier") callbacks.barrier = nullptr;
    if (std::string(missing) == "all_reduce_max") callbacks.all_reduce_max = nullptr;
    if (std::string(missing) == "all_gather") callbacks.all_gather = nullptr;
    try {
      (void)make_callback_communicator(std::move(callbacks));
      ADD_FAILURE() << "no error without " << missing;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(std::string("'") + missing + "'"), std::string::npos)
          << error.what();
    }
  }
}

TEST(CallbackCommunicator, RejectsRanksOutsideTheGroup) {
  const auto with = [](int rank, int size, int local_rank) {
    Recorder recorder;
    CommunicatorCallbacks callbacks = recorder.callbacks();
    callbacks.rank = rank;
    callbacks.size = size;
    callbacks.local_rank = local_rank;
    return make_callback_communicator(std::move(callbacks));
  };
  EXPECT_THROW(with(0, 0, 0), std::invalid_argument);
  EXPECT_THROW(with(3, 3, 0), std::invalid_argument);
  EXPECT_THROW(with(-1, 3, 0), std::invalid_argument);
  EXPECT_THROW(with(0, 3, -1), std::invalid_argument);
  EXPECT_NO_THROW(with(2, 3, 1));
}

/// Sets TRITON_DIST_AUTOTUNE_TIMEOUT for one test and restores it afterwards.
class TimeoutVariable : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* value = std::getenv(kName)) saved_ = value;
    ::unsetenv(kName);
  }
  void TearDown() override {
    if (saved_) {
      ::setenv(kName, saved_->c_str(), 1);
    } else {
      ::unsetenv(kName);
    }
  }
  static void set(const char* value) { ::setenv(kName, value, 1); }
  static constexpr const char* kName = "TRITON_DIST_AUTOTUNE_TIMEOUT";
  std::optional<std::string> saved_;
};

TEST_F(TimeoutVariable, DefaultsToTenMinutes) {
  EXPECT_EQ(default_collective_timeout(), std::chrono::minutes(10));
  set("");
  EXPECT_EQ(default_collective_timeout(), std::chrono::minutes(10));
}

TEST_F(TimeoutVariable, IsReadInSeconds) {
  set("2");
  EXPECT_EQ(default_collective_timeout(), 2000ms);
  set("0.25");
  EXPECT_EQ(default_collective_timeout(), 250ms);
  set("3600");
  EXPECT_EQ(default_collective_timeout(), std::chrono::hours(1));
}

TEST_F(TimeoutVariable, InfOrNoneMeansNoDeadline) {
  set("inf");
  EXPECT_EQ(default_collective_timeout(), kNoDeadline);
  set("none");
  EXPECT_EQ(default_collective_timeout(), kNoDeadline);
}

TEST_F(TimeoutVariable, RejectsWhatIsNotAPositiveNumberNamingTheVariable) {
  for (const char* bad : {"0", "-5", "abc", "10s", "1e-9", "nan", " "}) {
    set(bad);
    try {
      (void)default_collective_timeout();
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("TRITON_DIST_AUTOTUNE_TIMEOUT"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace disttune
