// Send, receive and their non-blocking forms. Each side is planned
// (plan.hpp) and prepared (sides.hpp); packed data travels as MPI_PACKED,
// which matches any receive type of the same signature, so a Strata sender
// talks to a plain receiver and back.
#include "interposer/transfer/point_to_point.hpp"

#include "fault/hooks.hpp"
#include "interposer/mpi/real_mpi.hpp"
#include "interposer/transfer/deferred_sends.hpp"
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
    p = plan_buffer(buf, count, type, HostOp::transfer, side[0] == 's' ? Access::read : Access::write);
  }
  trace_plan(call, side, p);
  return p;
}

// Registers a started request with what it must do at completion.
void track(MPI_Request request, PendingOp&& op) {
  counters().requests_started.fetch_add(1, std::memory_order_relaxed);
  pending().put_back(request, std::move(op));
}

}  // namespace

int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  fault::P2pScope rec(fault::OpKind::send, comm, count, type, dest, tag);
  Plan p = plan_peer("MPI_Send", "send", dest, buf, count, type);
  if (p.path == Path::library) return real().Send(buf, count, type, dest, tag, comm);
  Outgoing out;
  if (int rc = prepare_send(p, buf, count, type, &out); rc != MPI_SUCCESS) return raise_error(comm, rc, "MPI_Send");
  return real().Send(out.buffer, out.count, out.type, dest, tag, comm);
}

int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  fault::P2pScope rec(fault::OpKind::isend, comm, count, type, dest, tag, request);
  Plan p = plan_peer("MPI_Isend", "send", dest, buf, count, type);
  if (defers(p, comm, dest, tag)) return defer_isend(p, buf, count, type, dest, tag, comm, request);
  flush_deferred_sends();  // messages to one peer keep their order
  if (p.path == Path::library) return real().Isend(buf, count, type, dest, tag, comm, request);
  PendingOp op;
  op.kind = PendingOp::Kind::send;
  if (int rc = prepare_send(p, buf, count, type, &op.send); rc != MPI_SUCCESS)
    return raise_error(comm, rc, "MPI_Isend");
  const int rc = real().Isend(op.send.buffer, op.send.count, op.send.type, dest, tag, comm, request);
  if (rc == MPI_SUCCESS) track(*request, std::move(op));
  return rc;
}

int recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  fault::P2pScope rec(fault::OpKind::recv, comm, count, type, source, tag);
  Plan p = plan_peer("MPI_Recv", "recv", source, buf, count, type);
  if (p.path == Path::library) return real().Recv(buf, count, type, source, tag, comm, status);
  Incoming in;
  if (int rc = prepare_recv(p, buf, count, type, &in); rc != MPI_SUCCESS) return raise_error(comm, rc, "MPI_Recv");
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().Recv(in.buffer, in.count, in.type, source, tag, comm, st);
  if (rc == MPI_SUCCESS) {
    if (int done = complete_recv(in, *st); done != MPI_SUCCESS) rc = raise_error(comm, done, "MPI_Recv");
  }
  return rc;
}

int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  fault::P2pScope rec(fault::OpKind::irecv, comm, count, type, source, tag, request);
  Plan p = plan_peer("MPI_Irecv", "recv", source, buf, count, type);
  if (p.path == Path::library) return real().Irecv(buf, count, type, source, tag, comm, request);
  PendingOp op;
  op.kind = PendingOp::Kind::recv;
  if (int rc = prepare_recv(p, buf, count, type, &op.recv); rc != MPI_SUCCESS)
    return raise_error(comm, rc, "MPI_Irecv");
  const int rc = real().Irecv(op.recv.buffer, op.recv.count, op.recv.type, source, tag, comm, request);
  if (rc == MPI_SUCCESS && op.recv.plan.path != Path::library) track(*request, std::move(op));
  return rc;
}

int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  fault::P2pScope rec(fault::OpKind::sendrecv, comm, sendcount, sendtype, dest, sendtag, nullptr, source);
  Plan sp = plan_peer("MPI_Sendrecv", "send", dest, sendbuf, sendcount, sendtype);
  Plan rp = plan_peer("MPI_Sendrecv", "recv", source, recvbuf, recvcount, recvtype);
  if (sp.path == Path::library && rp.path == Path::library) {
    return real().Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, status);
  }
  Outgoing out;
  Incoming in;
  if (int rc = prepare_send(sp, sendbuf, sendcount, sendtype, &out); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, "MPI_Sendrecv");
  }
  if (int rc = prepare_recv(rp, recvbuf, recvcount, recvtype, &in); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, "MPI_Sendrecv");
  }
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  int rc = real().Sendrecv(out.buffer, out.count, out.type, dest, sendtag, in.buffer, in.count, in.type, source,
                           recvtag, comm, st);
  if (rc == MPI_SUCCESS) {
    if (int done = complete_recv(in, *st); done != MPI_SUCCESS) rc = raise_error(comm, done, "MPI_Sendrecv");
  }
  return rc;
}

}  // namespace strata::interposer
