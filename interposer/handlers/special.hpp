// The calls with a handler of their own (kinds special and special_local
// of the interception table): setup, datatypes, packing, completion,
// persistent starts and the collectives Strata routes. Each has the MPI
// signature. Declared here for every call of the table (declarations the
// wrappers never use cost nothing); defined only for those kinds.
#pragma once

#include "mpi/calls/mpi_calls.hpp"

namespace strata::interposer::special {

#define STRATA_CALL(fn, kind, lc, params, args, roles) int fn params;
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL

}  // namespace strata::interposer::special
