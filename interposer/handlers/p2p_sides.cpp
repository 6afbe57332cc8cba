#include "interposer/handlers/p2p_sides.hpp"

#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/direct_active.hpp"
#include "interposer/transfer/trace.hpp"
#include "interposer/types/fast_types.hpp"
#include "mpi/error_class.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/device_transfer.hpp"

namespace strata::interposer::handlers {

Plan plan_side(calls::Id id, Side side, int peer, const calls::Buf& buf) {
  Plan p;
  if (peer == MPI_PROC_NULL) {
    p.reason = "MPI_PROC_NULL";
  } else {
    p = plan_buffer(buf.pointer(), buf.count, buf.type, HostOp::transfer,
                    side == Side::send ? Access::read : Access::write);
  }
  trace_plan(calls::name_of(id), side == Side::send ? "send" : "recv", p);
  return p;
}

bool contiguous_host(const calls::Buf& buf) noexcept {
  return shape_of(buf.type) == TypeShape::contiguous && !gpu::maybe_device(buf.pointer());
}

bool passes_through(calls::Id id, Side side, const calls::Buf& buf) noexcept {
  if (side == Side::recv && device_direct::active() && may_get_descriptor(buf)) return false;  // direct.hpp
  if (!contiguous_host(buf)) return false;
  if (log::enabled(log::Level::debug, log::kP2p)) {
    STRATA_LOG(debug, kP2p, "%s %s: library (contiguous host data)", calls::name_of(id),
               side == Side::send ? "send" : "recv");
  }
  return true;
}

bool may_get_descriptor(const calls::Buf& buf) noexcept {
  if (!device_direct::active() || buf.count <= 0) return false;
  int size = 0;
  if (mpi::real().MPI_Type_size(buf.type, &size) != MPI_SUCCESS) return true;
  return static_cast<int64_t>(size) * buf.count >= static_cast<int64_t>(kDirectDescriptorBytes);
}

void hand_over(const calls::Buf& buf, const Outgoing& out) {
  buf.replace(out.buffer);
  buf.replace_count(out.count);
  buf.replace_type(out.type);
}

void hand_over(const calls::Buf& buf, const Incoming& in) {
  buf.replace(in.buffer);
  buf.replace_count(in.count);
  buf.replace_type(in.type);
}

void track(MPI_Request request, PendingOp&& op) {
  counters().requests_started.fetch_add(1, std::memory_order_relaxed);
  pending().put_back(request, std::move(op));
}

MPI_Comm default_comm() {
#if MPI_VERSION >= 4
  return MPI_COMM_SELF;
#else
  return MPI_COMM_WORLD;
#endif
}

int prepare_replace(calls::Id id, const calls::Buf& buf, int dest, int source, Outgoing* /*unused*/, Incoming* in) {
  if (dest == MPI_PROC_NULL && source == MPI_PROC_NULL) return kLibrary;
  const Plan p = plan_side(id, Side::recv, MPI_ANY_SOURCE, buf);  // written, so planned as a receive
  if (p.path == Path::library) return kLibrary;
  void* user = const_cast<void*>(buf.pointer());
  if (int rc = prepare_recv(p, user, buf.count, buf.type, in); rc != MPI_SUCCESS) return rc;
  switch (in->plan.path) {
    case Path::host_pack: pack_host(p.layout.block(), user, in->host.data()); break;
    case Path::device_pack: {
      const mover::DevicePart part = whole(p, user);
      const Status s = mover::device_pack(in->device, &part, 1);
      if (s != Status::ok) return mpi::error_class(s);
      break;
    }
    case Path::library:  // no staging memory: the library's own buffer handling
      return kLibrary;
    case Path::device_span:  // the host copy of the span, filled by prepare_recv, is sent and received into
      break;
  }
  counters().sends_packed.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

}  // namespace strata::interposer::handlers
