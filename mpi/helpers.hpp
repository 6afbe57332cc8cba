// Shorthands over real() for the calls Strata makes most, where a caller has
// nothing to do with a failure but take a default.
#pragma once

#include "mpi/real_mpi.hpp"

namespace strata::mpi {

// The calling process's rank in `comm`; -1 when the library cannot say
// (MPI_COMM_NULL is not asked: the library would raise an error on it).
inline int rank(MPI_Comm comm) noexcept {
  int r = -1;
  return comm != MPI_COMM_NULL && real().MPI_Comm_rank(comm, &r) == MPI_SUCCESS ? r : -1;
}

// The size of `comm`'s (local) group; 0 when the library cannot say.
inline int size(MPI_Comm comm) noexcept {
  int n = 0;
  return comm != MPI_COMM_NULL && real().MPI_Comm_size(comm, &n) == MPI_SUCCESS ? n : 0;
}

// Whether MPI_Finalize has run, or the library cannot say: then no MPI call
// may be made, a free of Strata's own communicators included.
inline bool finalized() noexcept {
  int flag = 1;
  return real().MPI_Finalized(&flag) != MPI_SUCCESS || flag != 0;
}

// Whether MPI calls may be made now: MPI_Init has run and MPI_Finalize has
// not (false when the library cannot say).
inline bool running() noexcept {
  int initialized = 0;
  int finalized = 1;
  return real().MPI_Initialized(&initialized) == MPI_SUCCESS && real().MPI_Finalized(&finalized) == MPI_SUCCESS &&
         initialized != 0 && finalized == 0;
}

// The library's wall clock. Not a pointer of real(): MPI_Wtime and
// MPI_Wtick may be macros.
inline double wtime() noexcept { return PMPI_Wtime(); }

}  // namespace strata::mpi
