// The completion calls and persistent starts. Each has the MPI signature
// and finishes Strata's requests among the ones it is given (pending.hpp):
// a receive is unpacked and a staged call's results copied back before the
// call returns; sends release their staging; persistent requests stay.
#pragma once

#include <mpi.h>

namespace strata::interposer {

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
int start(MPI_Request* request);
int startall(int count, MPI_Request requests[]);

}  // namespace strata::interposer
