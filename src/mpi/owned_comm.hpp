// OwnedComm: a move-only MPI communicator that frees itself (MPI_Comm_free) when destroyed.
#pragma once

#include <mpi.h>

namespace disttune::detail {

/// Owns one MPI communicator made by this library. Errors on it are returned, not fatal.
class OwnedComm {
 public:
  /// A duplicate of `comm` (collective over `comm`).
  static OwnedComm duplicate(MPI_Comm comm);
  /// The processes of `comm` that share this node's memory (collective over `comm`).
  static OwnedComm split_by_node(MPI_Comm comm);

  OwnedComm(OwnedComm&& other) noexcept;
  OwnedComm& operator=(OwnedComm&& other) noexcept;
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  /// Frees the communicator unless MPI is already finalised (then there is nothing to free).
  ~OwnedComm();

  MPI_Comm get() const { return comm_; }
  int rank() const;
  int size() const;

 private:
  explicit OwnedComm(MPI_Comm comm);
  void release();

  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace disttune::detail
