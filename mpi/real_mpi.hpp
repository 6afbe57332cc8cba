// The MPI library as Strata calls it: one pointer per function, named like
// the function (real().MPI_Send, real().MPI_Send_c).
//
// Strata's own code calls MPI through this table, never by the MPI_* names:
// inside the preloaded shim those names are Strata's wrappers. One field per
// call of the interception table (mpi/calls/mpi_calls.hpp), pointing at the
// library's PMPI_* entry (what a linked application gets); the shim fills
// them with dlsym(RTLD_NEXT, "MPI_*") so that a profiling tool loaded after
// Strata still sees every call.
//
// Zero cost on purpose: the shim's pass-through wrappers call through this on
// every MPI call. real() is an inline reference to a global (a load and an
// indirect call): no lock, no extra call.
#pragma once

#include "mpi/calls/mpi_calls.hpp"

namespace strata::mpi {

struct RealMpi {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `fn` is pasted into a declaration
#define STRATA_CALL(fn, kind, lc, params, args, roles) decltype(&::P##fn) fn = &::P##fn;
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
};

// The table in effect (PMPI_* unless the shim installed the next symbols).
extern RealMpi g_real_mpi;
inline const RealMpi& real() { return g_real_mpi; }

// Called once by the shim's constructor: resolves every entry of the
// interception table with dlsym(RTLD_NEXT, "<fn>"), keeping PMPI_<fn> where
// none is found.
void install_next_symbols();

}  // namespace strata::mpi
