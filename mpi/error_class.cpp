#include "mpi/error_class.hpp"

#include <mpi.h>

namespace strata::mpi {

int error_class(Status status) noexcept {
  switch (status) {
    case Status::ok: return MPI_SUCCESS;
    case Status::invalid_argument: return MPI_ERR_ARG;
    case Status::not_supported:
    case Status::irreducible: return MPI_ERR_UNSUPPORTED_OPERATION;
    case Status::out_of_memory: return MPI_ERR_NO_MEM;
    // The device runtime, NCCL or the library failed: not a fault of the
    // MPI implementation (MPI_ERR_INTERN), a known error MPI has no class for.
    case Status::mpi_error:
    case Status::device_error:
    case Status::timeout: return MPI_ERR_OTHER;
    case Status::internal: return MPI_ERR_INTERN;
  }
  return MPI_ERR_INTERN;
}

}  // namespace strata::mpi
