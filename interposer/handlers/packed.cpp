#include "interposer/handlers/routed.hpp"

#include "collectives/job_facts.hpp"
#include "interposer/transfer/all_to_all.hpp"

namespace strata::interposer::packed {

int MPI_Alltoallv(const LibraryRoute& library, const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  // Host buffers or not, no NCCL route here (MPI_COMM_NULL: the library's error).
  if (comm == MPI_COMM_NULL || coll::surely_library_only(comm)) {
    const int rc = alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    return rc == kStageWholeCall ? library() : rc;
  }
  return routed::alltoallv_exchange(library, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                    recvtype, comm);
}

int MPI_Neighbor_alltoallv(const LibraryRoute& library, const void* sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const int rc =
      neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  return rc == kStageWholeCall ? library() : rc;
}

int MPI_Neighbor_alltoallw(const LibraryRoute& library, const void* sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                           const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  const int rc =
      neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  return rc == kStageWholeCall ? library() : rc;
}

}  // namespace strata::interposer::packed
