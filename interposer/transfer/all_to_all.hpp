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

// Returned by the three calls above, before any communication, when a
// side Strata would have to write on the GPU has a datatype it cannot
// reduce, by alltoallv on an intercommunicator and with MPI_IN_PLACE: the
// caller then runs the staged library call (staged_call.hpp), which writes
// exactly the datatype's bytes back.
constexpr int kStageWholeCall = -2;

// Releases the helper datatypes this file creates (MPI_Finalize).
void free_byte_types();

}  // namespace strata::interposer
