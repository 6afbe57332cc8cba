// Persistent point-to-point requests (MPI_Send_init in every mode,
// MPI_Recv_init). The staging is set up once and the library's persistent
// request is made on it; every MPI_Start packs a send's buffer again
// (special::MPI_Start), every completion unpacks a receive; the entry lives
// until MPI_Request_free.
#include "interposer/handlers/handlers.hpp"
#include "interposer/handlers/p2p_sides.hpp"

namespace strata::interposer::handlers {

int send_init(Id id, Library library, const Buf& in, int dest, MPI_Comm comm, MPI_Request* request) {
  const Plan p = plan_side(id, Side::send, dest, in);
  if (p.path == Path::library) return library();
  PendingOp op;
  op.kind = PendingOp::Kind::send;
  op.comm = comm;
  op.persistent = true;
  op.active = false;
  if (int rc = reserve_send(p, in.pointer(), in.count, in.type, &op.send); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  op.refill = p;
  op.refill_buffer = in.pointer();
  hand_over(in, op.send);
  const int rc = library();
  if (rc == MPI_SUCCESS) track(*request, std::move(op));
  return rc;
}

int recv_init(Id id, Library library, const Buf& out, int source, MPI_Comm comm, MPI_Request* request) {
  const Plan p = plan_side(id, Side::recv, source, out);
  if (p.path == Path::library) return library();
  PendingOp op;
  op.kind = PendingOp::Kind::recv;
  op.comm = comm;
  op.persistent = true;
  op.active = false;
  if (int rc = prepare_recv(p, const_cast<void*>(out.pointer()), out.count, out.type, &op.recv); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  if (op.recv.plan.path == Path::library) return library();
  hand_over(out, op.recv);
  const int rc = library();
  if (rc == MPI_SUCCESS) track(*request, std::move(op));
  return rc;
}

}  // namespace strata::interposer::handlers
