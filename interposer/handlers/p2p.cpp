// Point-to-point handlers: every send mode, receives, matched receives and
// send-receives, blocking and non-blocking. Each side is planned (plan.hpp)
// and prepared (sides.hpp); packed data travels as MPI_PACKED, which
// matches any receive type of the same signature, so a Strata sender talks
// to a plain receiver and back. Matching (sources, tags, probes, cancel) is
// the library's.
#include "interposer/handlers/handlers.hpp"
#include "interposer/handlers/p2p_sides.hpp"
#include "interposer/handlers/watched_recv.hpp"

#include "fault/hooks.hpp"
#include "interposer/transfer/deferred_sends.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/probed.hpp"
#include "interposer/transfer/watched_recvs.hpp"
#include "mpi/real_mpi.hpp"

#include <memory>
#include <utility>

namespace strata::interposer::handlers {

int send(Id id, Library library, const Buf& in, int dest, int tag, MPI_Comm comm) {
  fault::P2pScope rec(fault::OpKind::send, comm, clamp_count(in.count), in.type, dest, tag);
  if (passes_through(id, Side::send, in)) return library();
  const Plan p = plan_side(id, Side::send, dest, in);
  if (p.path == Path::library) return library();
  Outgoing out;
  if (int rc = prepare_send_to(p, in.pointer(), in.count, in.type, comm, dest, &out); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  hand_over(in, out);
  const int rc = library();
  if (rc != MPI_SUCCESS) out.direct.not_sent();
  return rc;  // a descriptor's send completes when the receiver has the bytes (~DirectSend)
}

int isend(Id id, Library library, const Buf& in, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  fault::P2pScope rec(fault::OpKind::isend, comm, clamp_count(in.count), in.type, dest, tag, request);
  if (passes_through(id, Side::send, in)) {
    flush_deferred_sends_to(comm, dest);  // messages to one peer keep their order
    return library();
  }
  Plan p = plan_side(id, Side::send, dest, in);
  if (id == Id::MPI_Isend) p = isend_plan(std::move(p));
  if (id == Id::MPI_Isend && defers(p, comm, dest, tag)) {  // device-direct ones too: packed in the batch
    return defer_isend(p, in.pointer(), static_cast<int>(in.count), in.type, dest, tag, comm, request);
  }
  flush_deferred_sends_to(comm, dest);  // messages to one peer keep their order
  if (p.path == Path::library) return library();
  PendingOp op;
  op.kind = PendingOp::Kind::send;
  op.comm = comm;
  if (int rc = prepare_send_to(p, in.pointer(), in.count, in.type, comm, dest, &op.send); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  hand_over(in, op.send);
  const int rc = library();
  if (rc == MPI_SUCCESS) {
    track(*request, std::move(op));
  } else {
    op.send.direct.not_sent();
  }
  return rc;
}

namespace {

// The library's receive of what the user posted (no kept message matched).
int recv_posted(Id id, Library library, const Buf& out, int source, MPI_Comm comm, MPI_Status*& status) {
  fault::P2pScope rec(fault::OpKind::recv, comm, clamp_count(out.count), out.type, source, 0);
  if (passes_through(id, Side::recv, out)) return library();
  // Contiguous host data with device-direct descriptors about: the library
  // receives into the user's buffer, and only a message of exactly a
  // descriptor's size is looked at (no plan, no staging).
  if (source != MPI_PROC_NULL && contiguous_host(out)) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    int rc = library();
    if (rc == MPI_SUCCESS) {
      if (int done = complete_host_recv(const_cast<void*>(out.pointer()), out.count, out.type, *status);
          done != MPI_SUCCESS) {
        rc = raise_error(comm, done, calls::name_of(id));
      }
    }
    return rc;
  }
  const Plan p = plan_side(id, Side::recv, source, out);
  if (p.path == Path::library && (source == MPI_PROC_NULL || !may_get_descriptor(out))) return library();
  Incoming in;
  if (int rc = prepare_recv(p, const_cast<void*>(out.pointer()), out.count, out.type, &in); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  hand_over(out, in);
  int rc = library();
  if (rc == MPI_SUCCESS) {
    if (int done = complete_recv(in, *status); done != MPI_SUCCESS) rc = raise_error(comm, done, calls::name_of(id));
  }
  return rc;
}

// Contiguous host data with device-direct descriptors about: the library
// receives into the user's buffer, and the request is only watched
// (watched_recvs.hpp); where the table has no room, a full Strata request.
int irecv_watched(Library library, const Buf& out, MPI_Comm comm, MPI_Request* request) {
  const int rc = library();
  if (rc != MPI_SUCCESS) return rc;
  void* buffer = const_cast<void*>(out.pointer());
  if (!watched_recvs().add(*request, WatchedRecv{buffer, out.count, out.type, comm})) {
    watch_refused(*request, buffer, out.count, out.type, comm);
  }
  return rc;
}

int irecv_posted(Id id, Library library, const Buf& out, int source, MPI_Comm comm, MPI_Request* request) {
  fault::P2pScope rec(fault::OpKind::irecv, comm, clamp_count(out.count), out.type, source, 0, request);
  if (passes_through(id, Side::recv, out)) return library();
  if (source != MPI_PROC_NULL && contiguous_host(out)) return irecv_watched(library, out, comm, request);
  const Plan p = plan_side(id, Side::recv, source, out);
  if (p.path == Path::library && (source == MPI_PROC_NULL || !may_get_descriptor(out))) return library();
  // Memory the hint does not know as host (not classified yet, or a granule
  // shared with device memory), classified as host by the plan.
  if (source != MPI_PROC_NULL && p.host_contiguous) return irecv_watched(library, out, comm, request);
  PendingOp op;
  op.kind = PendingOp::Kind::recv;
  op.comm = comm;
  if (int rc = prepare_recv(p, const_cast<void*>(out.pointer()), out.count, out.type, &op.recv); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  hand_over(out, op.recv);
  const int rc = library();
  // With descriptors about, a receive the library completes is checked for one (direct.hpp).
  if (rc == MPI_SUCCESS && (op.recv.plan.path != Path::library || may_get_descriptor(out))) {
    track(*request, std::move(op));
  }
  return rc;
}

// A message a probe kept (probed.hpp) received into the user's buffer, as
// the library would have delivered it: `status` says so.
int receive_kept(Id id, const probed::Message& m, const Buf& out, MPI_Comm comm, MPI_Status* status) {
  fault::P2pScope rec(fault::OpKind::recv, comm, clamp_count(out.count), out.type, m.source, 0);
  const Plan p = plan_side(id, Side::recv, m.source, out);
  Incoming in;
  if (int rc = prepare_recv(p, const_cast<void*>(out.pointer()), out.count, out.type, &in); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  probed::fill_status(m, status);
  const int rc = complete_kept_recv(in, m.bytes, m.descriptor, *status);
  return rc == MPI_SUCCESS ? rc : raise_error(comm, rc, calls::name_of(id));
}

// A kept message's receive as a request: already complete (a generalized
// request whose status is the receive's).
struct KeptReceive {
  MPI_Status status;
};
int kept_query(void* state, MPI_Status* status) {
  *status = static_cast<KeptReceive*>(state)->status;
  return MPI_SUCCESS;
}
int kept_free(void* state) {
  delete static_cast<KeptReceive*>(state);
  return MPI_SUCCESS;
}
int kept_cancel(void*, int) { return MPI_SUCCESS; }  // complete: nothing to cancel

int ireceive_kept(Id id, const probed::Message& m, const Buf& out, MPI_Comm comm, MPI_Request* request) {
  auto state = std::make_unique<KeptReceive>();
  if (int rc = receive_kept(id, m, out, comm, &state->status); rc != MPI_SUCCESS) return rc;
  if (int rc = mpi::real().MPI_Grequest_start(kept_query, kept_free, kept_cancel, state.get(), request);
      rc != MPI_SUCCESS) {
    return rc;
  }
  (void)state.release();  // kept_free's now
  return mpi::real().MPI_Grequest_complete(*request);
}

}  // namespace

int recv(Id id, Library library, const Buf& out, int source, int tag, MPI_Comm comm, MPI_Status*& status) {
  if (probed::any_kept()) {
    if (std::unique_ptr<probed::Message> m = probed::take(comm, source, tag)) {
      MPI_Status local;
      return receive_kept(id, *m, out, comm, status == MPI_STATUS_IGNORE ? &local : status);
    }
  }
  return recv_posted(id, library, out, source, comm, status);
}

int irecv(Id id, Library library, const Buf& out, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  if (probed::any_kept()) {
    if (std::unique_ptr<probed::Message> m = probed::take(comm, source, tag)) {
      return ireceive_kept(id, *m, out, comm, request);
    }
  }
  return irecv_posted(id, library, out, source, comm, request);
}

// A matched message (MPI_Mprobe, MPI_Improbe) has no communicator to
// report a failure on: the default error handler's is used.
int mrecv(Id id, Library library, const Buf& out, MPI_Message* message, MPI_Status*& status) {
  if (std::unique_ptr<probed::Message> m = probed::take_handle(message)) {
    MPI_Status local;
    return receive_kept(id, *m, out, default_comm(), status == MPI_STATUS_IGNORE ? &local : status);
  }
  if (message == nullptr || *message == MPI_MESSAGE_NULL || *message == MPI_MESSAGE_NO_PROC) return library();
  return recv_posted(id, library, out, 0, default_comm(), status);
}

int imrecv(Id id, Library library, const Buf& out, MPI_Message* message, MPI_Request* request) {
  if (std::unique_ptr<probed::Message> m = probed::take_handle(message)) {
    return ireceive_kept(id, *m, out, default_comm(), request);
  }
  if (message == nullptr || *message == MPI_MESSAGE_NULL || *message == MPI_MESSAGE_NO_PROC) return library();
  return irecv_posted(id, library, out, 0, default_comm(), request);
}

int sendrecv(Id id, Library library, const Buf& in, int dest, const Buf& out, int source, MPI_Comm comm,
             MPI_Status*& status) {
  fault::P2pScope rec(fault::OpKind::sendrecv, comm, clamp_count(in.count), in.type, dest, 0, nullptr, source);
  if (passes_through(id, Side::send, in) && passes_through(id, Side::recv, out)) return library();
  const Plan sp = plan_side(id, Side::send, dest, in);
  const Plan rp = plan_side(id, Side::recv, source, out);
  if (sp.path == Path::library && rp.path == Path::library && (source == MPI_PROC_NULL || !may_get_descriptor(out))) {
    return library();
  }
  Outgoing o;
  Incoming i;
  if (int rc = prepare_send_to(sp, in.pointer(), in.count, in.type, comm, dest, &o); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  if (int rc = prepare_recv(rp, const_cast<void*>(out.pointer()), out.count, out.type, &i); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  hand_over(in, o);
  hand_over(out, i);
  int rc = library();
  if (rc == MPI_SUCCESS) {
    if (int done = complete_recv(i, *status); done != MPI_SUCCESS) rc = raise_error(comm, done, calls::name_of(id));
  } else {
    o.direct.not_sent();
  }
  return rc;
}

int isendrecv(Id id, Library library, const Buf& in, int dest, const Buf& out, int source, MPI_Comm comm,
              MPI_Request* request) {
  const Plan sp = plan_side(id, Side::send, dest, in);
  const Plan rp = plan_side(id, Side::recv, source, out);
  if (sp.path == Path::library && rp.path == Path::library && (source == MPI_PROC_NULL || !may_get_descriptor(out))) {
    return library();
  }
  PendingOp op;
  op.kind = PendingOp::Kind::sendrecv;
  op.comm = comm;
  if (int rc = prepare_send_to(sp, in.pointer(), in.count, in.type, comm, dest, &op.send); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  if (int rc = prepare_recv(rp, const_cast<void*>(out.pointer()), out.count, out.type, &op.recv); rc != MPI_SUCCESS) {
    return raise_error(comm, rc, calls::name_of(id));
  }
  hand_over(in, op.send);
  hand_over(out, op.recv);
  const int rc = library();
  if (rc == MPI_SUCCESS) track(*request, std::move(op));
  return rc;
}

// One buffer sent and then received into: the packed bytes of a derived
// type go out, the arriving packed bytes are unpacked into exactly the
// type's bytes. A device buffer of a type Strata cannot reduce is refused
// (MPI_ERR_TYPE), as for any receive (plan.hpp).
int sendrecv_replace(Id id, Library library, const Buf& buf, int dest, int source, MPI_Comm comm, MPI_Status*& status) {
  fault::P2pScope rec(fault::OpKind::sendrecv, comm, clamp_count(buf.count), buf.type, dest, 0, nullptr, source);
  Incoming in;
  Outgoing staged;
  const int prepared = prepare_replace(id, buf, dest, source, &staged, &in);
  if (prepared == kLibrary) return library();
  if (prepared != MPI_SUCCESS) return raise_error(comm, prepared, calls::name_of(id));
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  hand_over(buf, in);
  int rc = library();
  if (rc == MPI_SUCCESS) {
    if (int done = complete_recv(in, *status); done != MPI_SUCCESS) rc = raise_error(comm, done, calls::name_of(id));
  }
  return rc;
}

int isendrecv_replace(Id id, Library library, const Buf& buf, int dest, int source, MPI_Comm comm,
                      MPI_Request* request) {
  PendingOp op;
  op.kind = PendingOp::Kind::recv;
  op.comm = comm;
  const int prepared = prepare_replace(id, buf, dest, source, &op.send, &op.recv);
  if (prepared == kLibrary) return library();
  if (prepared != MPI_SUCCESS) return raise_error(comm, prepared, calls::name_of(id));
  hand_over(buf, op.recv);
  const int rc = library();
  if (rc == MPI_SUCCESS) track(*request, std::move(op));
  return rc;
}

}  // namespace strata::interposer::handlers
