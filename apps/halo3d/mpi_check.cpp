#include "mpi_check.hpp"

#include <mpi.h>

#include <cstdio>

namespace halo3d {

bool mpi_ok(int rc, const char* call) {
  if (rc == MPI_SUCCESS) {
    return true;
  }
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) {
    std::snprintf(text, sizeof text, "MPI error code %d", rc);
  }
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);  // best effort: only labels the message
  std::fprintf(stderr, "strata-halo3d: rank %d: %s failed: %s\n", rank, call, text);
  return false;
}

}  // namespace halo3d
