// disttune::cuda without a usable driver (the CI machine): a clear error, never a crash.
// On a machine with a CUDA device these tests skip; the GPU tests cover that case.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "disttune/cuda.hpp"

namespace disttune {
namespace {

TEST(CudaUnavailable, TimerConstructionThrowsTheReason) {
  const auto reason = cuda_unavailable_reason();
  if (!reason) GTEST_SKIP() << "a CUDA device is usable here; tests/gpu covers the timer";
  EXPECT_FALSE(reason->empty());
  try {
    CudaTimer timer;
    FAIL() << "CudaTimer was made without a usable driver";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(*reason), std::string::npos) << error.what();
  }
}

TEST(CudaUnavailable, ReasonNamesTheDriverLibraryWhenItIsMissing) {
  const auto reason = cuda_unavailable_reason();
  if (!reason) GTEST_SKIP() << "a CUDA device is usable here";
  if (reason->find("cannot load") == std::string::npos) {
    GTEST_SKIP() << "libcuda.so.1 loads here; the reason is: " << *reason;
  }
  EXPECT_NE(reason->find("libcuda.so.1"), std::string::npos) << *reason;
}

TEST(CudaUnavailable, NegativeGraphRunsIsRejectedBeforeTheDriverIsTouched) {
  try {
    CudaTimer timer({.graph_runs = -1});
    FAIL() << "graph_runs = -1 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("graph_runs"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace disttune
