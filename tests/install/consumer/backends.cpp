// A consumer linking the installed backend targets: names each one whose code it linked.
#include <cstdio>
#include <memory>

#include "disttune/cuda.hpp"
#include "disttune/mpi.hpp"
#include "disttune/nccl.hpp"

int main() {
  std::printf("backends:");
#ifdef CONSUMER_HAS_CUDA
  // Runs without a GPU: says why CUDA is unusable (or nothing), never throws.
  (void)disttune::cuda_unavailable_reason();
  std::printf(" cuda");
#endif
#ifdef CONSUMER_HAS_MPI
  // Linked, not called (that needs mpirun): the pointer must resolve at link time.
  std::unique_ptr<disttune::Communicator> (*volatile make_mpi)() = &disttune::make_mpi_communicator;
  std::printf(" mpi%s", make_mpi ? "" : "(unresolved)");
#endif
#ifdef CONSUMER_HAS_NCCL
  auto* volatile make_nccl = &disttune::make_nccl_communicator;
  std::printf(" nccl%s", make_nccl ? "" : "(unresolved)");
#endif
  std::printf("\n");
}
