// The MPI library as Strata calls it: one pointer per function, named like
// the function (real().MPI_Send, real().MPI_Send_c, real().MPI_Comm_size).
//
// Strata's own code calls MPI through this table only: never by an
// intercepted MPI_* name (inside the preloaded shim those names are Strata's
// wrappers), and nothing outside mpi/ names PMPI_* (tests/architecture checks
// both). Two lists fill it:
//   - the interception table (mpi/calls/mpi_calls.hpp): fields that point at
//     the library's PMPI_* entries (what a linked application gets); the
//     shim fills them with dlsym(RTLD_NEXT, "MPI_*") so that a profiling tool
//     loaded after Strata still sees every call Strata passes on and every
//     message Strata sends;
//   - the calls Strata makes without intercepting them
//     (mpi/calls/library_calls.hpp): constants, the library's PMPI_* entries
//     always (queries and bookkeeping no tool needs to see), called directly.
//
// Zero cost on purpose: the shim's pass-through wrappers call through this on
// every MPI call. real() is an inline reference to a global (a load and an
// indirect call; the constants are direct calls): no lock, no extra call.
#pragma once

#include <strata/export.h>

#include "mpi/calls/library_calls.hpp"
#include "mpi/calls/mpi_calls.hpp"

namespace strata::mpi {

struct RealMpi {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `fn` is pasted into a declaration
#define STRATA_CALL(fn, kind, lc, params, args, roles) decltype(&::P##fn) fn = &::P##fn;
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL

// NOLINTNEXTLINE(bugprone-macro-parentheses): `fn` is pasted into a declaration
#define STRATA_LIBRARY_CALL(fn) static constexpr decltype(&::P##fn) fn = &::P##fn;
  STRATA_LIBRARY_CALLS(STRATA_LIBRARY_CALL)
#undef STRATA_LIBRARY_CALL
};

// The table in effect (PMPI_* unless the shim installed the next symbols).
// Exported (STRATA_API) so that Strata::kokkos, a static library over
// libstrata.so, calls through the same table; the preload library keeps it
// hidden (--exclude-libs) like everything else.
extern STRATA_API RealMpi g_real_mpi;
inline const RealMpi& real() { return g_real_mpi; }

// Called once by the shim's constructor: resolves every entry of the
// interception table with dlsym(RTLD_NEXT, "<fn>"), keeping PMPI_<fn> where
// none is found.
void install_next_symbols();

}  // namespace strata::mpi
