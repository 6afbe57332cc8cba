// The two out-of-line steps of a watched host receive (transfer/
// watched_recvs.hpp), which the exported MPI_Recv and MPI_Irecv take
// without entering the general path (shim/enter.hpp, host_recv_route).
#pragma once

#include <mpi.h>

#include <cstdint>

namespace strata::interposer::handlers {

// A receive into contiguous host data delivered exactly a descriptor's
// size: a descriptor of this job is served (the bytes pulled from the
// sender's GPU into `buffer`), anything else is the program's own bytes.
// Returns the MPI error code to report (raised on `comm`'s handler).
int host_recv_arrived(void* buffer, int64_t count, MPI_Datatype type, MPI_Comm comm, MPI_Status& status) noexcept;

// The watch table had no room for `request`: it becomes a Strata request
// of a receive the library serves (pending.hpp).
void watch_refused(MPI_Request request, void* buffer, int64_t count, MPI_Datatype type, MPI_Comm comm) noexcept;

}  // namespace strata::interposer::handlers
