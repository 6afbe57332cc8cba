// All-to-all exchanges with derived datatypes: MPI_Alltoallv and the
// neighbourhood forms, each side packed by Strata where the model says so.
#pragma once

#include <mpi.h>

namespace strata::interposer {

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm);
int neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                       const MPI_Datatype recvtypes[], MPI_Comm comm);

// Releases the helper datatypes this file creates (MPI_Finalize).
void free_byte_types();

}  // namespace strata::interposer
