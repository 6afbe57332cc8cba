// Checking the return code of a call into the library: the first failing
// call logs, with the library's own message, and callers propagate the
// Status (STRATA_TRY).
#pragma once

#include <strata/export.h>
#include <strata/status.hpp>

#include <cstdint>

namespace strata::mpi {

// Status::ok for MPI_SUCCESS; otherwise logs "`what` failed: <the library's
// error string> (<rc>)" for the log subsystem `subsys` (base/log.hpp) and
// answers Status::mpi_error. Exported (STRATA_API) for Strata::kokkos, a
// static library over libstrata.so.
STRATA_API Status check(int rc, uint32_t subsys, const char* what) noexcept;

}  // namespace strata::mpi
