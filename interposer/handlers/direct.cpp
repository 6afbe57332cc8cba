#include "interposer/handlers/direct.hpp"

#include "interposer/handlers/handlers.hpp"
#include "interposer/handlers/routed.hpp"
#include "interposer/transfer/deferred_sends.hpp"
#include "mpi/real_mpi.hpp"

namespace strata::interposer::direct {

using calls::Id;
using namespace calls::roles;
using mpi::real;

int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  flush_deferred_sends();
  auto call = [&] { return real().MPI_Send(buf, count, type, dest, tag, comm); };
  return handlers::send(Id::MPI_Send, Library(call), in(buf, count, type), dest, tag, comm);
}

int recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  flush_deferred_sends();
  auto call = [&] { return real().MPI_Recv(buf, count, type, source, tag, comm, status); };
  return handlers::recv(Id::MPI_Recv, Library(call), out(buf, count, type), source, tag, comm, status);
}

int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  auto call = [&] { return real().MPI_Isend(buf, count, type, dest, tag, comm, request); };
  return handlers::isend(Id::MPI_Isend, Library(call), in(buf, count, type), dest, tag, comm, request);
}

int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  auto call = [&] { return real().MPI_Irecv(buf, count, type, source, tag, comm, request); };
  return handlers::irecv(Id::MPI_Irecv, Library(call), out(buf, count, type), source, tag, comm, request);
}

int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  flush_deferred_sends();
  auto call = [&] {
    return real().MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                               recvtag, comm, status);
  };
  return handlers::sendrecv(Id::MPI_Sendrecv, Library(call), in(sendbuf, sendcount, sendtype), dest,
                            out(recvbuf, recvcount, recvtype), source, comm, status);
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  flush_deferred_sends();
  auto call = [&] { return real().MPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); };
  return routed::MPI_Allreduce(
      handlers::LibraryRoute{Id::MPI_Allreduce, Library(call), comm, no_root,
                             bufs(one(IN, ALL, sendbuf, count, type), one(OUT, ALL, recvbuf, count, type))},
      sendbuf, recvbuf, count, type, op, comm);
}

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  flush_deferred_sends();
  auto call = [&] { return real().MPI_Bcast(buffer, count, type, root, comm); };
  return routed::MPI_Bcast(
      handlers::LibraryRoute{Id::MPI_Bcast, Library(call), comm, root, bufs(one(BCAST, ALL, buffer, count, type))},
      buffer, count, type, root, comm);
}

}  // namespace strata::interposer::direct
