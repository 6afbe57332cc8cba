// The collectives Strata routes (kind `routed` of the interception table):
// MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast and
// MPI_Reduce; and the exchanges MPI_Alltoall(v), MPI_Gather(v),
// MPI_Scatter(v) and MPI_Allgatherv (NCCL or the library only). Every rank takes the route collectives/routing.hpp
// decides, the same on all of them whatever each one's buffers and datatypes:
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

#include "interposer/calls/call_ids.hpp"
#include "interposer/handlers/handlers.hpp"

#include <mpi.h>

#include <cstdint>

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

// The exported function's own test (shim/wrappers.cpp), made once it found
// every buffer in host memory under a contiguous type and the communicator
// not left to the library (coll::surely_library_only, asked inline there
// first: a host job's calls pass without this call): may the call go to
// the library with nothing else done? On a GPU job's, the reductions,
// the broadcast and the allgather also pass between two agreements the last
// of which found host memory on some rank (coll::library_between_agreements,
// which counts the call as decide() would, so every rank's count of
// decisions stays alike); the exchanges likewise between two of their
// agreements (MPI_Gather also where its block is below
// STRATA_COLL_GATHER_NCCL_MIN, which its handler leaves to the library
// before deciding). One specialisation per routed call of the table: a
// routed call added without one does not compile.
template <calls::Id id>
struct Passes;
template <>
struct Passes<calls::Id::MPI_Allreduce> {
  static bool test(const void*, void*, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Reduce_scatter_block> {
  static bool test(const void*, void*, int recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Reduce> {
  static bool test(const void*, void*, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Bcast> {
  static bool test(void*, int count, MPI_Datatype type, int root, MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Allgather> {
  static bool test(const void*, int, MPI_Datatype, void*, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Alltoall> {
  static bool test(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Gather> {
  static bool test(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*, int recvcount,
                   MPI_Datatype recvtype, int, MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Gatherv> {
  static bool test(const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype, int,
                   MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Scatter> {
  static bool test(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Scatterv> {
  static bool test(const void*, const int[], const int[], MPI_Datatype, void*, int, MPI_Datatype, int,
                   MPI_Comm comm) noexcept;
};
template <>
struct Passes<calls::Id::MPI_Allgatherv> {
  static bool test(const void*, int, MPI_Datatype, void*, const int[], const int[], MPI_Datatype,
                   MPI_Comm comm) noexcept;
};

// The bytes of `count` elements' data (0 where count <= 0 or the type is
// not valid): the type table's size first, else MPI_Type_size.
int64_t signature_bytes(MPI_Datatype type, int64_t count) noexcept;

int MPI_Allreduce(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                  MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_block(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int MPI_Allgather(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Bcast(const LibraryRoute& library, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
int MPI_Reduce(const LibraryRoute& library, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm);

// The exchanges (routed_exchange.cpp): grouped NCCL sends and receives
// where every rank's buffers are in device memory, else the library's call.
int MPI_Alltoall(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Gather(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatter(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatterv(const LibraryRoute& library, const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Allgatherv(const LibraryRoute& library, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
// MPI_Alltoallv's NCCL route; elsewhere Strata's packed all-to-all (packed::).
int alltoallv_exchange(const LibraryRoute& library, const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, MPI_Comm comm);

}  // namespace routed

// All-to-alls whose sides Strata packs per peer (transfer/all_to_all.hpp);
// the staged library call where it cannot (a device side it cannot write
// exactly).
namespace packed {

using handlers::LibraryRoute;

int MPI_Alltoallv(const LibraryRoute& library, const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallv(const LibraryRoute& library, const void* sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallw(const LibraryRoute& library, const void* sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                           const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm);

}  // namespace packed
}  // namespace strata::interposer
