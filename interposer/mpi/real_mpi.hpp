// The MPI functions Strata intercepts, as pointers to the real ones: one
// field per call of the interception table (interposer/calls/mpi_calls.hpp),
// named like the call (real().MPI_Send, real().MPI_Send_c).
//
// Strata's own code calls MPI through this table, never by the MPI_* names:
// inside the preloaded shim those names are Strata's wrappers. By default the
// table points at the library's PMPI_* entries (what a linked application
// gets); the shim fills it with dlsym(RTLD_NEXT, "MPI_*") so that a profiling
// tool loaded after Strata still sees every call.
#pragma once

#include "interposer/calls/mpi_calls.hpp"

namespace strata::mpi {

struct RealMpi {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `fn` is pasted into a declaration
#define STRATA_CALL(fn, kind, lc, params, args, roles) decltype(&::P##fn) fn = &::P##fn;
#include "interposer/calls/each_call.inc"
#undef STRATA_CALL
};

// The table in effect (PMPI_* unless the shim installed the next symbols).
extern RealMpi g_real_mpi;
inline const RealMpi& real() { return g_real_mpi; }

// Called once by the shim's constructor: resolves every entry with
// dlsym(RTLD_NEXT, "<fn>"), keeping PMPI_<fn> where none is found.
void install_next_symbols();

}  // namespace strata::mpi
