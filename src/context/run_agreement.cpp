// Run agreement: failure ordinal, outer-function failure and a launch digest in one reduce.
#include "run_agreement.hpp"

#include <array>
#include <cstdint>

namespace disttune::detail {
namespace {

/// Larger than any encoded failure (ordinal * ranks + rank), exactly representable.
constexpr double kNoFailure = 9007199254740992.0;  // 2^53

/// The first 52 bits of a hex digest, exact in a double.
double digest_bits(const std::string& hex) {
  return static_cast<double>(std::stoull(hex.substr(0, 13), nullptr, 16));
}

}  // namespace

AgreedRun agree_on_run(Communicator& comm, const ContextMaker& context, const RunOutcome& mine,
                       int outer_run) {
  const double ranks = static_cast<double>(comm.size());
  const double launches = static_cast<double>(mine.launches);
  const double digest = digest_bits(mine.launch_digest);
  // Each maximum also reduces a negation, which gives the minimum.
  std::array<double, 6> values{
      mine.failed_launch ? -(static_cast<double>(*mine.failed_launch) * ranks + comm.rank()) : -kNoFailure,
      mine.outer_failed ? comm.rank() + 1.0 : 0.0,
      launches, -launches, digest, -digest};
  comm.all_reduce_max(values, context("outer run agreement", std::nullopt));

  AgreedRun agreed;
  if (values[0] > -kNoFailure) {
    const auto code = static_cast<std::uint64_t>(-values[0]);
    agreed.failed_launch = static_cast<std::size_t>(code / static_cast<std::uint64_t>(comm.size()));
    agreed.failed_rank = static_cast<int>(code % static_cast<std::uint64_t>(comm.size()));
  }
  if (values[1] > 0.0) agreed.outer_failed_rank = static_cast<int>(values[1]) - 1;
  if (!agreed.failed_launch && !agreed.outer_failed_rank &&
      (values[2] != -values[3] || values[4] != -values[5])) {
    throw RankDisagreement(
        "disttune: ranks made different tunable-kernel launches in outer run " +
        std::to_string(outer_run) + " of '" + context.function + "' (launch counts from " +
        std::to_string(static_cast<long long>(-values[3])) + " to " +
        std::to_string(static_cast<long long>(values[2])) +
        (values[4] != -values[5] ? ", and the kernels, keys or configs launched differ" : "") +
        "); every rank must run the same kernels with the same keys in the same order");
  }
  return agreed;
}

}  // namespace disttune::detail
