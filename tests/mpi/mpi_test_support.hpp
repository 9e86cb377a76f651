// Helpers shared by the MPI tests: ranks, contexts with deadlines, a directory shared by the ranks.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "disttune/communicator.hpp"

namespace disttune::test {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// Every rank's value of `mine`, in rank order.
inline std::vector<int> gather_ints(int mine) {
  std::vector<int> all(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return all;
}

/// A context for a test's own collective: deadline 30 s away, so a broken test fails
/// instead of hanging ctest.
inline CollectiveContext test_context(std::string phase) {
  return CollectiveContext{std::move(phase), "test", "", std::nullopt,
                           std::chrono::steady_clock::now() + std::chrono::seconds(30)};
}

/// A fresh directory made by rank 0 and known to every rank (the ranks share one node);
/// removed by rank 0 when destroyed, after every rank is done with it.
class SharedTempDir {
 public:
  SharedTempDir() {
    char path[4096] = {};
    if (world_rank() == 0) {
      std::string pattern = (std::filesystem::temp_directory_path() / "disttune-mpi-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr) std::abort();
      pattern.copy(path, sizeof path - 1);
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path;
  }
  SharedTempDir(const SharedTempDir&) = delete;
  SharedTempDir& operator=(const SharedTempDir&) = delete;
  ~SharedTempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) std::filesystem::remove_all(path_);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace disttune::test
