// Strata's point-to-point path for programs that link the interposer core
// instead of preloading it (strata-measure, benchmarks): the handlers over
// the real functions, with the MPI signatures.
#pragma once

#include "interposer/transfer/completion.hpp"

#include <mpi.h>

namespace strata::interposer::direct {

int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status);
int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request);
int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request);
int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status);

// The routed collectives as the interposer runs them.
int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);

}  // namespace strata::interposer::direct
