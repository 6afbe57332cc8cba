// The interposer's point-to-point calls. Each has the MPI signature and
// semantics: the library handles whatever Strata does not take (see plan.hpp),
// and every error comes from the library call itself, so the error class
// and the communicator's error handler are the library's own.
#pragma once

#include <mpi.h>

namespace strata::interposer {

int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status);
int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request);
int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request);
int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status);

// Completion calls: they finish Strata's requests among the ones given.
int wait(MPI_Request* request, MPI_Status* status);
int test(MPI_Request* request, int* flag, MPI_Status* status);
int waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status);
int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
int waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
int testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
int request_free(MPI_Request* request);
int cancel(MPI_Request* request);
int request_get_status(MPI_Request request, int* flag, MPI_Status* status);

}  // namespace strata::interposer
