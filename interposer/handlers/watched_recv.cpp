#include "interposer/handlers/watched_recv.hpp"

#include "base/log.hpp"
#include "interposer/handlers/p2p_sides.hpp"
#include "interposer/transfer/watched_recvs.hpp"
#include "interposer/transfer/sides.hpp"

namespace strata::interposer::handlers {

int host_recv_arrived(void* buffer, int64_t count, MPI_Datatype type, MPI_Comm comm, MPI_Status& status) noexcept {
  try {
    const int rc = complete_host_recv(buffer, count, type, status);
    return rc == MPI_SUCCESS ? rc : raise_error(comm, rc, "MPI_Recv");
  } catch (...) {
    STRATA_LOG(error, kP2p, "MPI_Recv: internal failure (out of memory?); returning MPI_ERR_INTERN");
    return MPI_ERR_INTERN;
  }
}

void watch_refused(MPI_Request request, void* buffer, int64_t count, MPI_Datatype type, MPI_Comm comm) noexcept {
  try {
    track(request, as_pending(WatchedRecv{buffer, count, type, comm}));
  } catch (...) {
    STRATA_LOG(error, kP2p,
               "MPI_Irecv: out of memory while watching a receive; a device-direct message it gets "
               "would not be recognised");
  }
}

}  // namespace strata::interposer::handlers
