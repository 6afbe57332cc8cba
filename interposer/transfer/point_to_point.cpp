// Send, receive and their non-blocking forms through Strata's host pack.
// Packed data travels as MPI_PACKED, which matches any receive type of the
// same signature, so a Strata sender talks to a plain receiver and back.
#include "interposer/transfer/point_to_point.hpp"

#include "interposer/mpi/real_mpi.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/trace.hpp"

namespace strata::interposer {
namespace {

using mpi::real;

Plan plan_peer(const char* call, const char* side, int peer, const void* buf, int count, MPI_Datatype type) {
  Plan p;
  if (peer == MPI_PROC_NULL) {
    p.reason = "MPI_PROC_NULL";
  } else {
    p = plan_buffer(buf, count, type, HostOp::transfer);
  }
  trace_plan(call, side, p);
  return p;
}

// A staging buffer holding the packed send data, or an empty one (then the
// library sends from the user's buffer).
HostStaging stage_send(const Plan& p, const void* buf) {
  if (p.path != Path::host_pack) return HostStaging();
  HostStaging staging = HostStaging::acquire(p.bytes);
  if (staging) {
    pack_host(p.layout.block(), buf, staging.data());
    counters().sends_packed.fetch_add(1, std::memory_order_relaxed);
  }
  return staging;
}

}  // namespace

int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  Plan p = plan_peer("MPI_Send", "send", dest, buf, count, type);
  HostStaging staging = stage_send(p, buf);
  if (!staging) return real().Send(buf, count, type, dest, tag, comm);
  return real().Send(staging.data(), static_cast<int>(p.bytes), MPI_PACKED, dest, tag, comm);
}

int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  Plan p = plan_peer("MPI_Isend", "send", dest, buf, count, type);
  HostStaging staging = stage_send(p, buf);
  if (!staging) return real().Isend(buf, count, type, dest, tag, comm, request);
  int rc = real().Isend(staging.data(), static_cast<int>(p.bytes), MPI_PACKED, dest, tag, comm, request);
  if (rc != MPI_SUCCESS) return rc;
  PendingOp op;
  op.kind = PendingOp::Kind::send;
  op.staging = std::move(staging);
  pending().put_back(*request, std::move(op));
  return rc;
}

int recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Plan p = plan_peer("MPI_Recv", "recv", source, buf, count, type);
  HostStaging staging = p.path == Path::host_pack ? HostStaging::acquire(p.bytes) : HostStaging();
  if (!staging) return real().Recv(buf, count, type, source, tag, comm, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().Recv(staging.data(), static_cast<int>(p.bytes), MPI_PACKED, source, tag, comm, st);
  if (rc == MPI_SUCCESS) unpack_arrived(p.layout.block(), staging, buf, *st);
  return rc;
}

int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  Plan p = plan_peer("MPI_Irecv", "recv", source, buf, count, type);
  HostStaging staging = p.path == Path::host_pack ? HostStaging::acquire(p.bytes) : HostStaging();
  if (!staging) return real().Irecv(buf, count, type, source, tag, comm, request);
  int rc = real().Irecv(staging.data(), static_cast<int>(p.bytes), MPI_PACKED, source, tag, comm, request);
  if (rc != MPI_SUCCESS) return rc;
  PendingOp op;
  op.kind = PendingOp::Kind::recv;
  op.staging = std::move(staging);
  op.user_buffer = buf;
  op.layout = std::move(p.layout);
  pending().put_back(*request, std::move(op));
  return rc;
}

int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  Plan sp = plan_peer("MPI_Sendrecv", "send", dest, sendbuf, sendcount, sendtype);
  Plan rp = plan_peer("MPI_Sendrecv", "recv", source, recvbuf, recvcount, recvtype);
  HostStaging sstage = stage_send(sp, sendbuf);
  HostStaging rstage = rp.path == Path::host_pack ? HostStaging::acquire(rp.bytes) : HostStaging();
  if (!sstage && !rstage) {
    return real().Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                           recvtag, comm, status);
  }
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().Sendrecv(sstage ? static_cast<const void*>(sstage.data()) : sendbuf,
                           sstage ? static_cast<int>(sp.bytes) : sendcount, sstage ? MPI_PACKED : sendtype, dest,
                           sendtag, rstage ? static_cast<void*>(rstage.data()) : recvbuf,
                           rstage ? static_cast<int>(rp.bytes) : recvcount, rstage ? MPI_PACKED : recvtype, source,
                           recvtag, comm, st);
  if (rc == MPI_SUCCESS && rstage) unpack_arrived(rp.layout.block(), rstage, recvbuf, *st);
  return rc;
}

}  // namespace strata::interposer
