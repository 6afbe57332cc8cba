// MPI calls Strata does not otherwise intercept but which could wait for a
// message a deferred send still holds (interposer/transfer/deferred_sends.hpp):
// other send modes (which must also stay behind earlier sends to the same
// peer), probes, persistent starts, blocking collectives, communicator and
// window creation, window synchronisation, collective file calls. Each
// flushes the deferred sends, then is the library's call unchanged. A
// flush with nothing deferred is one atomic load.
#include <strata/export.h>

#include "interposer/transfer/deferred_sends.hpp"

#include <mpi.h>

#define STRATA_FLUSH_THEN(call)                 \
  do {                                          \
    strata::interposer::flush_deferred_sends(); \
    return call;                                \
  } while (0)

extern "C" {

// --- point to point ---------------------------------------------------------

STRATA_API int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Ssend(buf, count, type, dest, tag, comm));
}
STRATA_API int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Bsend(buf, count, type, dest, tag, comm));
}
STRATA_API int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Rsend(buf, count, type, dest, tag, comm));
}
STRATA_API int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request) {
  STRATA_FLUSH_THEN(PMPI_Issend(buf, count, type, dest, tag, comm, request));
}
STRATA_API int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request) {
  STRATA_FLUSH_THEN(PMPI_Ibsend(buf, count, type, dest, tag, comm, request));
}
STRATA_API int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request) {
  STRATA_FLUSH_THEN(PMPI_Irsend(buf, count, type, dest, tag, comm, request));
}
STRATA_API int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                    int recvtag, MPI_Comm comm, MPI_Status* status) {
  STRATA_FLUSH_THEN(PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status));
}
STRATA_API int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  STRATA_FLUSH_THEN(PMPI_Probe(source, tag, comm, status));
}
STRATA_API int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  STRATA_FLUSH_THEN(PMPI_Iprobe(source, tag, comm, flag, status));
}
STRATA_API int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  STRATA_FLUSH_THEN(PMPI_Mprobe(source, tag, comm, message, status));
}
STRATA_API int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  STRATA_FLUSH_THEN(PMPI_Improbe(source, tag, comm, flag, message, status));
}
STRATA_API int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  STRATA_FLUSH_THEN(PMPI_Mrecv(buf, count, type, message, status));
}
STRATA_API int MPI_Start(MPI_Request* request) { STRATA_FLUSH_THEN(PMPI_Start(request)); }
STRATA_API int MPI_Startall(int count, MPI_Request requests[]) { STRATA_FLUSH_THEN(PMPI_Startall(count, requests)); }

// --- blocking collectives -----------------------------------------------------

STRATA_API int MPI_Barrier(MPI_Comm comm) { STRATA_FLUSH_THEN(PMPI_Barrier(comm)); }
STRATA_API int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
STRATA_API int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm));
}
STRATA_API int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
STRATA_API int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
STRATA_API int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}
STRATA_API int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
STRATA_API int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm) {
  STRATA_FLUSH_THEN(
      PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm));
}
STRATA_API int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm));
}
STRATA_API int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Scan(sendbuf, recvbuf, count, type, op, comm));
}
STRATA_API int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm));
}
STRATA_API int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
STRATA_API int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  STRATA_FLUSH_THEN(PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

// --- communicators and windows -------------------------------------------------

STRATA_API int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) { STRATA_FLUSH_THEN(PMPI_Comm_dup(comm, newcomm)); }
STRATA_API int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  STRATA_FLUSH_THEN(PMPI_Comm_split(comm, color, key, newcomm));
}
STRATA_API int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  STRATA_FLUSH_THEN(PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
}
STRATA_API int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  STRATA_FLUSH_THEN(PMPI_Comm_create(comm, group, newcomm));
}
STRATA_API int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                               MPI_Comm* newcomm) {
  STRATA_FLUSH_THEN(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm));
}
STRATA_API int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                              const int sourceweights[], int outdegree, const int destinations[],
                                              const int destweights[], MPI_Info info, int reorder, MPI_Comm* newcomm) {
  STRATA_FLUSH_THEN(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations,
                                                    destweights, info, reorder, newcomm));
}
STRATA_API int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  STRATA_FLUSH_THEN(PMPI_Win_create(base, size, disp_unit, info, comm, win));
}
STRATA_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                                MPI_Win* win) {
  STRATA_FLUSH_THEN(PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
}
STRATA_API int MPI_Win_free(MPI_Win* win) { STRATA_FLUSH_THEN(PMPI_Win_free(win)); }
STRATA_API int MPI_Win_fence(int assert, MPI_Win win) { STRATA_FLUSH_THEN(PMPI_Win_fence(assert, win)); }
STRATA_API int MPI_Win_wait(MPI_Win win) { STRATA_FLUSH_THEN(PMPI_Win_wait(win)); }
STRATA_API int MPI_Win_complete(MPI_Win win) { STRATA_FLUSH_THEN(PMPI_Win_complete(win)); }

// --- collective file calls -----------------------------------------------------

STRATA_API int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  STRATA_FLUSH_THEN(PMPI_File_open(comm, filename, amode, info, fh));
}
STRATA_API int MPI_File_close(MPI_File* fh) { STRATA_FLUSH_THEN(PMPI_File_close(fh)); }
STRATA_API int MPI_File_sync(MPI_File fh) { STRATA_FLUSH_THEN(PMPI_File_sync(fh)); }

}  // extern "C"
