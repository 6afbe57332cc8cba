// MPI_Pack, MPI_Unpack, MPI_Pack_size and the datatype lifecycle calls.
#pragma once

#include <mpi.h>

namespace strata::interposer {

int pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position, MPI_Comm comm);
int unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type, MPI_Comm comm);
int pack_size(int incount, MPI_Datatype type, MPI_Comm comm, int* size);

int type_commit(MPI_Datatype* type);
int type_free(MPI_Datatype* type);
int type_dup(MPI_Datatype type, MPI_Datatype* newtype);

// After a successful MPI_Init/MPI_Init_thread, and before MPI_Finalize.
void on_init();
int finalize();

}  // namespace strata::interposer
