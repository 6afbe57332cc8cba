// The collectives Strata routes (kind `routed` of the interception table):
// MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast and
// MPI_Reduce. Every rank takes the route collectives/routing.hpp decides,
// the same on all of them whatever each one's buffers and datatypes:
//
//   library  the library's collective with each rank's own arguments (its
//            device buffers staged through host memory, handlers::coll)
//   host     Strata's hierarchical host algorithm
//   nccl     NCCL
//
// On Strata's routes a rank whose datatype is not contiguous packs its data
// into a contiguous buffer first and unpacks the result after (broadcast and
// allgather: MPI only asks for equal type signatures, so one rank may send a
// vector that another receives as contiguous ints). Reductions map MPI's
// predefined numeric types and sum, prod, min, max; MPI requires every rank
// to pass the same count, datatype and op, so that mapping is the same on
// every rank. Device results are complete when the call returns.
#pragma once

#include "interposer/handlers/handlers.hpp"

#include <mpi.h>

namespace strata::interposer {

namespace handlers {
// The library route of a routed collective: the staged library call over
// the call's roles (handlers::coll).
struct LibraryRoute {
  Id id;
  Library library;
  MPI_Comm comm;
  int root;
  Bufs bufs;
  int operator()() const { return coll(id, library, comm, root, bufs); }
};
}  // namespace handlers

namespace routed {

using handlers::LibraryRoute;

int MPI_Allreduce(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                  MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_block(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int MPI_Allgather(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Bcast(const LibraryRoute& library, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
int MPI_Reduce(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
               MPI_Op op, int root, MPI_Comm comm);

}  // namespace routed
}  // namespace strata::interposer
