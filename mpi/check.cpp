#include "mpi/check.hpp"

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"

namespace strata::mpi {

Status check(int rc, uint32_t subsys, const char* what) noexcept {
  if (rc == MPI_SUCCESS) return Status::ok;
  if (log::enabled(log::Level::error, subsys)) {
    char text[MPI_MAX_ERROR_STRING] = {0};
    int length = 0;
    if (real().MPI_Error_string(rc, text, &length) != MPI_SUCCESS) text[0] = '\0';
    log::emit(log::Level::error, subsys, "%s failed: %s (%d)", what, text, rc);
  }
  return Status::mpi_error;
}

}  // namespace strata::mpi
