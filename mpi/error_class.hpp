// The MPI error class of a Strata Status: the one mapping used wherever a
// Strata step fails inside an MPI-shaped call (the interposer's handlers, the
// C API of the collectives, include/strata/collectives.h).
#pragma once

#include <strata/status.hpp>

namespace strata::mpi {

// MPI_SUCCESS for Status::ok; otherwise
//   invalid_argument             MPI_ERR_ARG
//   not_supported, irreducible   MPI_ERR_UNSUPPORTED_OPERATION
//   out_of_memory                MPI_ERR_NO_MEM
//   mpi_error, device_error,
//   timeout                      MPI_ERR_OTHER (a known error of no MPI class;
//                                the log line of the first detector says which)
//   internal (or out of range)   MPI_ERR_INTERN
int error_class(Status status) noexcept;

}  // namespace strata::mpi
