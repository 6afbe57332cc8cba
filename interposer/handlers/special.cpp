// The calls with handlers of their own, forwarding to where each is
// implemented.
#include "interposer/handlers/special.hpp"

#include "base/log.hpp"
#include "interposer/transfer/pack_calls.hpp"
#include "interposer/transfer/completion.hpp"
#include "mpi/real_mpi.hpp"

namespace strata::interposer::special {
namespace {

using mpi::real;

// After the library's own init succeeded: never fails the user's MPI_Init.
void initialize() noexcept {
  try {
    on_init();
  } catch (...) {
    STRATA_LOG(error, kShim, "initialisation failed (out of memory?); continuing as a pass-through where needed");
  }
}

}  // namespace

// --- setup, datatypes, packing -----------------------------------------------------

int MPI_Init(int* argc, char*** argv) {
  const int rc = real().MPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) initialize();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = real().MPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) initialize();
  return rc;
}

int MPI_Finalize() { return finalize(); }
int MPI_Type_commit(MPI_Datatype* type) { return type_commit(type); }
int MPI_Type_free(MPI_Datatype* type) { return type_free(type); }
int MPI_Type_dup(MPI_Datatype type, MPI_Datatype* newtype) { return type_dup(type, newtype); }

int MPI_Pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position,
             MPI_Comm comm) {
  return pack(inbuf, incount, type, outbuf, outsize, position, comm);
}

int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type,
               MPI_Comm comm) {
  return unpack(inbuf, insize, position, outbuf, outcount, type, comm);
}

int MPI_Pack_size(int incount, MPI_Datatype type, MPI_Comm comm, int* size) {
  return pack_size(incount, type, comm, size);
}

// --- completion --------------------------------------------------------------------

int MPI_Wait(MPI_Request* request, MPI_Status* status) { return wait(request, status); }
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) { return test(request, flag, status); }
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) { return waitall(count, requests, statuses); }
int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return testall(count, requests, flag, statuses);
}
int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return waitany(count, requests, index, status);
}
int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return testany(count, requests, index, flag, status);
}
int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return waitsome(incount, requests, outcount, indices, statuses);
}
int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return testsome(incount, requests, outcount, indices, statuses);
}
int MPI_Request_free(MPI_Request* request) { return request_free(request); }
int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return request_get_status(request, flag, status);
}
int MPI_Cancel(MPI_Request* request) { return cancel(request); }
int MPI_Start(MPI_Request* request) { return start(request); }
int MPI_Startall(int count, MPI_Request requests[]) { return startall(count, requests); }

}  // namespace strata::interposer::special
