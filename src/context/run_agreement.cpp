// Run agreement: checkpoint, failure, outer failure and a launch digest in one reduce.
#include "context/run_agreement.hpp"

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

Agreed agree_at_checkpoint(Communicator& comm, const ContextMaker& context, const Position& mine,
                           int outer_run) {
  const double ranks = static_cast<double>(comm.size());
  const double checkpoint = static_cast<double>(mine.checkpoint);
  const double launches = static_cast<double>(mine.launches);
  const double digest = mine.launch_digest.empty() ? 0.0 : digest_bits(mine.launch_digest);
  // Each maximum also reduces a negation, which gives the minimum.
  std::array<double, 8> values{
      checkpoint, -checkpoint,
      mine.failed_launch ? -(static_cast<double>(*mine.failed_launch) * ranks + comm.rank()) : -kNoFailure,
      mine.outer_failed ? comm.rank() + 1.0 : 0.0,
      launches, -launches, digest, -digest};
  const bool at_launch = mine.checkpoint == Checkpoint::launch;
  comm.all_reduce_max(values, context(at_launch ? "launch failure vote" : "outer run agreement", std::nullopt));

  Agreed agreed;
  if (values[2] > -kNoFailure) {
    const auto code = static_cast<std::uint64_t>(-values[2]);
    agreed.failed_launch = static_cast<std::size_t>(code / static_cast<std::uint64_t>(comm.size()));
    agreed.failed_rank = static_cast<int>(code % static_cast<std::uint64_t>(comm.size()));
  }
  if (values[3] > 0.0) agreed.outer_failed_rank = static_cast<int>(values[3]) - 1;
  const auto where = [&] { return " in outer run " + std::to_string(outer_run) + " of '" + context.function + "'"; };
  constexpr const char* rule = "; every rank must run the same kernels with the same keys in the same order";
  if (values[0] != -values[1]) {
    agreed.disagreement = "disttune: ranks are at different points" + where() +
                          ": some launched a kernel that is being tuned while others finished the run "
                          "(launch counts from " + std::to_string(static_cast<long long>(-values[5])) +
                          " to " + std::to_string(static_cast<long long>(values[4])) + ")" + rule;
  } else if (!agreed.outer_failed_rank && (values[4] != -values[5] || values[6] != -values[7])) {
    agreed.disagreement = "disttune: ranks made different tunable-kernel launches" + where() +
                          " (launch counts from " + std::to_string(static_cast<long long>(-values[5])) +
                          " to " + std::to_string(static_cast<long long>(values[4])) +
                          (values[6] != -values[7] ? "; the kernels, keys or configs launched differ" : "") +
                          ")" + rule;
  }
  return agreed;
}

}  // namespace disttune::detail
