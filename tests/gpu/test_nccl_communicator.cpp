// The NCCL communicator on one GPU (one rank): its collectives, and its deadline when the
// stream is still busy. Skips, giving the reason, without a CUDA device.
#include <nccl.h>

#include <array>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/nccl.hpp"
#include "gpu_test_support.hpp"

namespace disttune {
namespace {

using gpu_test::check_cuda;

CollectiveContext context_in(std::string phase, std::chrono::milliseconds timeout) {
  return CollectiveContext{std::move(phase), "nccl_test", "[1]", 0,
                           std::chrono::steady_clock::now() + timeout};
}

/// A one-rank NCCL communicator on the current device, destroyed unless a test aborted it.
class NcclCommunicatorTest : public gpu_test::CudaTest {
 protected:
  void SetUp() override {
    gpu_test::CudaTest::SetUp();
    if (IsSkipped()) return;
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    ASSERT_EQ(ncclCommInitAll(&nccl_, 1, &device), ncclSuccess);
  }
  void TearDown() override {
    if (nccl_ != nullptr && !aborted_) ncclCommDestroy(nccl_);
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    gpu_test::CudaTest::TearDown();
  }
  ncclComm_t nccl_ = nullptr;
  bool aborted_ = false;
};

TEST_F(NcclCommunicatorTest, CollectivesOfOneRankReturnItsOwnData) {
  auto comm = make_nccl_communicator(nccl_, stream_, 0);
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->local_rank(), 0);
  comm->barrier(context_in("barrier", std::chrono::seconds(30)));
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values{1.5, -2.0, inf};
  comm->all_reduce_max(values, context_in("max", std::chrono::seconds(30)));
  EXPECT_EQ(values, (std::vector<double>{1.5, -2.0, inf}));
  const std::string binary("abc\0def", 7);
  EXPECT_EQ(comm->all_gather(binary, context_in("gather", std::chrono::seconds(30))),
            std::vector<std::string>{binary});
  EXPECT_EQ(comm->all_gather("", context_in("gather", std::chrono::seconds(30))),
            std::vector<std::string>{""});
  const std::string big(100000, 'x');  // larger than the first scratch allocation
  EXPECT_EQ(comm->all_gather(big, context_in("gather", std::chrono::seconds(30))),
            std::vector<std::string>{big});
}

TEST_F(NcclCommunicatorTest, FindsTheLocalRankFromHostNames) {
  auto comm = make_nccl_communicator(nccl_, stream_);
  EXPECT_EQ(comm->local_rank(), 0);
}

TEST_F(NcclCommunicatorTest, MissedDeadlineAbortsTheCommunicatorAndNamesTheContext) {
  auto comm = make_nccl_communicator(nccl_, stream_, 0);
  // Work queued before the collective keeps the stream busy for 2 s; the deadline is 300 ms.
  gpu_test::DeviceArray<unsigned long long> elapsed(1);
  gpu_test::launch_spin(cycles_for_ms(2000), elapsed.get(), stream_);
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    comm->barrier(context_in("barrier before timed runs", std::chrono::milliseconds(300)));
    ADD_FAILURE() << "the barrier returned while the stream was busy";
  } catch (const CollectiveTimeout& error) {
    message = error.what();
  }
  aborted_ = true;
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(waited, 1.5) << "the deadline was 300 ms";
  EXPECT_NE(message.find("phase 'barrier before timed runs' of function 'nccl_test', key [1], "
                         "candidate 0"), std::string::npos) << message;
  EXPECT_NE(message.find("ncclCommAbort"), std::string::npos) << message;
  std::array<double, 1> value{1.0};
  EXPECT_THROW(comm->all_reduce_max(value, context_in("after", std::chrono::seconds(1))),
               std::logic_error);
}

TEST(NcclCommunicatorArguments, RejectsANullCommunicator) {
  EXPECT_THROW((void)make_nccl_communicator(nullptr, nullptr, 0), std::invalid_argument);
}

}  // namespace
}  // namespace disttune
