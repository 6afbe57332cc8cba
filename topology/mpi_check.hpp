// Checking the return codes of MPI calls in topology/: mpi::check for the
// kTopo subsystem. The first failing call logs with the library's own
// message; callers propagate.
#pragma once

#include <strata/status.hpp>

#include <mpi.h>

namespace strata::topo::detail {

// Status::ok for MPI_SUCCESS; otherwise logs `what` with MPI's error string
// and answers Status::mpi_error.
Status mpi_check(int rc, const char* what) noexcept;

}  // namespace strata::topo::detail

// Runs one MPI call (through mpi::real()) and returns Status::mpi_error from
// the enclosing function when it fails.
#define STRATA_TOPO_MPI(call) STRATA_TRY(::strata::topo::detail::mpi_check((call), #call))
