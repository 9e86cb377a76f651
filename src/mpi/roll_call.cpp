// RollCall: when a collective is late, asks every rank where it is, over a control communicator.
#include "mpi/roll_call.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "mpi/mpi_check.hpp"
#include "util/number_text.hpp"

namespace disttune::detail {
namespace {

constexpr int kQueryTag = 1;
constexpr int kAnswerTag = 2;

std::string encode(const CollectivePosition& waiting) {
  const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - waiting.since;
  return nlohmann::json{{"sequence", waiting.sequence},
                        {"where", waiting.where},
                        {"waited_s", waited.count()}}
      .dump();
}

std::optional<RankWhereabouts> decode(const std::string& bytes) {
  const nlohmann::json json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("sequence") || !json["sequence"].is_number_unsigned() ||
      !json.contains("where") || !json["where"].is_string() || !json.contains("waited_s") ||
      !json["waited_s"].is_number()) {
    return std::nullopt;
  }
  return RankWhereabouts{json["sequence"].get<std::uint64_t>(), json["where"].get<std::string>(),
                         json["waited_s"].get<double>()};
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

/// Receives the message that MPI_Iprobe just found.
std::string receive(MPI_Comm comm, const MPI_Status& probed) {
  int count = 0;
  check_mpi(MPI_Get_count(&probed, MPI_CHAR, &count), "MPI_Get_count");
  std::string bytes(static_cast<std::size_t>(count), '\0');
  check_mpi(MPI_Recv(bytes.data(), count, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, comm,
                     MPI_STATUS_IGNORE),
            "MPI_Recv");
  return bytes;
}

}  // namespace

RollCall::RollCall(MPI_Comm control) : control_(control) {
  check_mpi(MPI_Comm_rank(control_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(control_, &size_), "MPI_Comm_size");
}

RollCall::~RollCall() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (PendingSend& pending : sends_) {
    int done = 0;
    MPI_Test(&pending.request, &done, MPI_STATUS_IGNORE);
    if (!done) {
      MPI_Cancel(&pending.request);
      MPI_Wait(&pending.request, MPI_STATUS_IGNORE);
    }
  }
}

void RollCall::send(int rank, int tag, std::string bytes) {
  PendingSend& pending = sends_.emplace_back();
  pending.bytes = std::move(bytes);
  check_mpi(MPI_Isend(pending.bytes.data(), static_cast<int>(pending.bytes.size()), MPI_CHAR, rank,
                      tag, control_, &pending.request),
            "MPI_Isend");
}

void RollCall::reap_sends() {
  std::erase_if(sends_, [](PendingSend& pending) {
    int done = 0;
    check_mpi(MPI_Test(&pending.request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  });
}

void RollCall::answer_queries(const CollectivePosition& waiting) {
  reap_sends();
  for (;;) {
    int found = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, control_, &found, &status), "MPI_Iprobe");
    if (!found) return;
    (void)receive(control_, status);
    send(status.MPI_SOURCE, kAnswerTag, encode(waiting));
  }
}

std::vector<std::optional<RankWhereabouts>> RollCall::survey(const CollectivePosition& waiting,
                                                             std::chrono::milliseconds grace) {
  std::vector<std::optional<RankWhereabouts>> answers(static_cast<std::size_t>(size_));
  answers[static_cast<std::size_t>(rank_)] = decode(encode(waiting));
  int missing = size_ - 1;
  for (int rank = 0; rank < size_; ++rank) {
    if (rank == rank_) continue;
    try {
      send(rank, kQueryTag, std::to_string(waiting.sequence));
    } catch (const std::runtime_error&) {
      --missing;  // a rank that cannot be asked (gone) cannot answer: it is named as missing
    }
  }
  const auto give_up = std::chrono::steady_clock::now() + grace;
  while (missing > 0 && std::chrono::steady_clock::now() < give_up) {
    answer_queries(waiting);
    int found = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, kAnswerTag, control_, &found, &status), "MPI_Iprobe");
    if (!found) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    std::optional<RankWhereabouts> answer = decode(receive(control_, status));
    auto& slot = answers[static_cast<std::size_t>(status.MPI_SOURCE)];
    if (answer && !slot) {
      slot = std::move(answer);
      --missing;
    }
  }
  return answers;
}

std::string describe_survey(const std::vector<std::optional<RankWhereabouts>>& answers,
                            std::uint64_t sequence, std::chrono::milliseconds grace) {
  std::vector<int> silent;
  std::vector<int> here;
  std::ostringstream elsewhere;
  for (std::size_t rank = 0; rank < answers.size(); ++rank) {
    const auto& answer = answers[rank];
    if (!answer) {
      silent.push_back(static_cast<int>(rank));
    } else if (answer->sequence == sequence) {
      here.push_back(static_cast<int>(rank));
    } else {
      elsewhere << "\ndisttune:   rank " << rank << " waits in another collective (#" << answer->sequence
                << ", " << answer->where << ") for " << seconds_with_unit(answer->waited_s);
    }
  }
  std::ostringstream lines;
  if (!silent.empty()) {
    lines << "\ndisttune:   ranks that did not arrive: " << join_ranks(silent) << " (no answer within "
          << seconds_with_unit(std::chrono::duration<double>(grace).count())
          << ": busy outside disttune's collectives, or gone)";
  }
  lines << elsewhere.str();
  lines << "\ndisttune:   ranks waiting in this collective: " << join_ranks(here);
  return lines.str();
}

}  // namespace disttune::detail
