// The MPI functions Strata intercepts, as pointers to the real ones.
//
// Strata's own code calls MPI through this table, never by the MPI_* names:
// inside the preloaded shim those names are Strata's wrappers. By default the
// table points at the library's PMPI_* entries (what a linked application
// gets); the shim fills it with dlsym(RTLD_NEXT, "MPI_*") so that a profiling
// tool loaded after Strata still sees every call.
#pragma once

#include <mpi.h>

// X(name): one entry per intercepted MPI function.
#define STRATA_INTERCEPTED_MPI(X) \
  X(Init)                         \
  X(Init_thread)                  \
  X(Finalize)                     \
  X(Type_commit)                  \
  X(Type_free)                    \
  X(Type_dup)                     \
  X(Pack)                         \
  X(Unpack)                       \
  X(Pack_size)                    \
  X(Send)                         \
  X(Recv)                         \
  X(Isend)                        \
  X(Irecv)                        \
  X(Sendrecv)                     \
  X(Wait)                         \
  X(Waitall)                      \
  X(Waitany)                      \
  X(Waitsome)                     \
  X(Test)                         \
  X(Testall)                      \
  X(Testany)                      \
  X(Testsome)                     \
  X(Request_free)                 \
  X(Cancel)                       \
  X(Alltoallv)                    \
  X(Neighbor_alltoallv)           \
  X(Neighbor_alltoallw)           \
  X(Allreduce)                    \
  X(Reduce_scatter_block)         \
  X(Allgather)                    \
  X(Bcast)                        \
  X(Reduce)

namespace strata::mpi {

struct RealMpi {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `name` is pasted into a declaration
#define STRATA_REAL_FIELD(name) decltype(&::PMPI_##name) name = &::PMPI_##name;
  STRATA_INTERCEPTED_MPI(STRATA_REAL_FIELD)
#undef STRATA_REAL_FIELD
};

// The table in effect (PMPI_* unless the shim installed the next symbols).
const RealMpi& real();

// Called once by the shim's constructor: resolves every entry with
// dlsym(RTLD_NEXT, "MPI_<name>"), keeping PMPI_<name> where none is found.
void install_next_symbols();

}  // namespace strata::mpi
