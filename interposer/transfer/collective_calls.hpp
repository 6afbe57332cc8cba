// The collectives the interposer routes: MPI_Allreduce,
// MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast and MPI_Reduce.
//
// Device buffers with a predefined numeric type and op (sum, prod, min,
// max) run as Strata's collectives (NCCL, flat or hierarchical per the cost
// model; host algorithms on staged copies where NCCL is missing), then the
// default stream is synchronised: MPI's call returns with the result.
// Other device calls go to a GPU-aware library as they are, or to the
// library on host copies of the buffers' spans. Host buffers go to the
// library, unless the cost model (or STRATA_COLL_ALGO) picks a
// hierarchical algorithm for the call.
//
// Every rank must pass buffers of the same kind (host or device) and the
// same datatype, as MPI requires for reductions; broadcast and allgather
// move contiguous data as bytes, so matching type signatures suffice
// there as long as every rank's datatype is contiguous or none is.
#pragma once

#include <mpi.h>

namespace strata::interposer {

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm);
int allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm);
int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);

}  // namespace strata::interposer
