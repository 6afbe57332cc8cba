// Checking MPI return codes. The program sets MPI_ERRORS_RETURN, so every MPI
// call reports its failure here instead of aborting inside the library.
#pragma once

namespace halo3d {

// True when `rc` is MPI_SUCCESS; otherwise writes
// "strata-halo3d: rank R: <call> failed: <MPI error string>" to stderr.
bool mpi_ok(int rc, const char* call);

}  // namespace halo3d

// Inside a function returning bool: return false when an MPI call fails.
#define HALO_MPI_CHECK(call)                \
  do {                                      \
    if (!::halo3d::mpi_ok((call), #call)) { \
      return false;                         \
    }                                       \
  } while (0)
