// The handler of each kind of the interception table (interposer/calls/
// call_kinds.hpp). A wrapper calls its kind's handler with the call's id,
// the real call (Library) and the roles of its arguments; the handler
// decides what Strata does, points the buffer arguments at staged copies
// where it must, and calls the library. Each returns the MPI return code.
#pragma once

#include "interposer/calls/call_ids.hpp"
#include "interposer/calls/roles.hpp"
#include "interposer/handlers/library.hpp"

#include <mpi.h>

namespace strata::interposer::handlers {

using calls::Buf;
using calls::Bufs;
using calls::ErrorTarget;
using calls::Id;

// --- point to point (p2p.cpp, persistent.cpp) ---------------------------------
int send(Id id, Library library, const Buf& in, int dest, int tag, MPI_Comm comm);
int isend(Id id, Library library, const Buf& in, int dest, int tag, MPI_Comm comm, MPI_Request* request);
int send_init(Id id, Library library, const Buf& in, int dest, MPI_Comm comm, MPI_Request* request);
int recv(Id id, Library library, const Buf& out, int source, int tag, MPI_Comm comm, MPI_Status*& status);
int irecv(Id id, Library library, const Buf& out, int source, int tag, MPI_Comm comm, MPI_Request* request);
int recv_init(Id id, Library library, const Buf& out, int source, MPI_Comm comm, MPI_Request* request);
int mrecv(Id id, Library library, const Buf& out, MPI_Message* message, MPI_Status*& status);
int imrecv(Id id, Library library, const Buf& out, MPI_Message* message, MPI_Request* request);
int sendrecv(Id id, Library library, const Buf& in, int dest, const Buf& out, int source, MPI_Comm comm,
             MPI_Status*& status);
int sendrecv_replace(Id id, Library library, const Buf& buf, int dest, int source, MPI_Comm comm, MPI_Status*& status);
int isendrecv(Id id, Library library, const Buf& in, int dest, const Buf& out, int source, MPI_Comm comm,
              MPI_Request* request);
int isendrecv_replace(Id id, Library library, const Buf& buf, int dest, int source, MPI_Comm comm,
                      MPI_Request* request);

// --- staged calls (staged.cpp) --------------------------------------------------
// Device buffers go to the library as pinned host copies of their spans
// (read ones copied in first, written ones copied back when the call's
// work is complete); calls on host buffers, and every call under a
// GPU-aware library, are the library's untouched.
int coll(Id id, Library library, MPI_Comm comm, int root, Bufs bufs);
int icoll(Id id, Library library, MPI_Comm comm, int root, MPI_Request* request, Bufs bufs);
int coll_init(Id id, Library library, MPI_Comm comm, int root, MPI_Request* request, Bufs bufs);
int local(Id id, Library library, const ErrorTarget& target, Bufs bufs);
int file(Id id, Library library, const ErrorTarget& target, Bufs bufs);
int ifile(Id id, Library library, const ErrorTarget& target, MPI_Request* request, Bufs bufs);
int file_begin(Id id, Library library, const ErrorTarget& target, Bufs bufs);
int file_end(Id id, Library library, const ErrorTarget& target, void** buf);

// --- refused (refused.cpp) --------------------------------------------------------
// Device buffers fail with MPI_ERR_BUFFER (unless the library is GPU-aware).
int refused(Id id, Library library, const ErrorTarget& target, Bufs bufs);

}  // namespace strata::interposer::handlers
