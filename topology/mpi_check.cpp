#include "topology/mpi_check.hpp"

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"

namespace strata::topo::detail {

Status mpi_check(int rc, const char* what) noexcept {
  if (rc == MPI_SUCCESS) {
    return Status::ok;
  }
  char text[MPI_MAX_ERROR_STRING] = "unknown error";
  int length = 0;
  if (mpi::real().MPI_Error_string(rc, text, &length) != MPI_SUCCESS) {
    text[0] = '\0';
  }
  STRATA_LOG(error, kTopo, "%s failed: %s (code %d)", what, text, rc);
  return Status::mpi_error;
}

}  // namespace strata::topo::detail
