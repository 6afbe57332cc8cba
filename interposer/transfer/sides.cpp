#include "interposer/transfer/sides.hpp"

#include "base/log.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/exact_write.hpp"
#include "mpi/error_class.hpp"
#include "mpi/real_mpi.hpp"

namespace strata::interposer {

DevicePart whole(const Plan& plan, const void* buf) {
  return DevicePart{&plan.layout.block(), static_cast<char*>(const_cast<void*>(buf)), 0};
}

void send_packed(Outgoing* out, const void* packed, int64_t bytes) {
  out->buffer = packed;
  out->count = static_cast<int>(bytes);
  out->type = MPI_PACKED;
  counters().sends_packed.fetch_add(1, std::memory_order_relaxed);
}

int raise_error(MPI_Comm comm, int code, const char* what) {
  STRATA_LOG(error, kDevice, "%s: Strata's %s step failed", what,
             code == MPI_ERR_NO_MEM ? "staging (out of memory)" : "device");
  if (comm != MPI_COMM_NULL) mpi::real().MPI_Comm_call_errhandler(comm, code);
  return code;
}

int reserve_send(const Plan& plan, const void* buf, int64_t count, MPI_Datatype type, Outgoing* out) {
  out->buffer = buf;
  out->count = count;
  out->type = type;
  switch (plan.path) {
    case Path::library: return MPI_SUCCESS;
    case Path::host_pack:
      out->host = Staging::host(plan.bytes);
      if (!out->host) return MPI_SUCCESS;  // the library packs it after all
      send_packed(out, out->host.data(), plan.bytes);
      return MPI_SUCCESS;
    case Path::device_pack: {
      out->device = DeviceMessage(plan.device, plan.method);
      const Status s = out->device.reserve(plan.bytes);
      if (s != Status::ok) return mpi::error_class(s);
      send_packed(out, out->device.mpi_buffer(), plan.bytes);
      return MPI_SUCCESS;
    }
    case Path::device_span: {
      out->host = Staging::acquire(pinned_pool(), plan.span.hi - plan.span.lo);
      if (!out->host) return MPI_ERR_NO_MEM;
      out->buffer = out->host.data() - plan.span.lo;  // the library packs the host copy with the user's type
      return MPI_SUCCESS;
    }
  }
  return MPI_SUCCESS;
}

int fill_send(const Plan& plan, const void* buf, Outgoing* out) {
  switch (plan.path) {
    case Path::library: return MPI_SUCCESS;
    case Path::host_pack:
      if (out->host) pack_host(plan.layout.block(), buf, out->host.data());
      return MPI_SUCCESS;
    case Path::device_pack: {
      const DevicePart part = whole(plan, buf);
      const Status s = device_pack(out->device, &part, 1);
      return s == Status::ok ? MPI_SUCCESS : mpi::error_class(s);
    }
    case Path::device_span: {
      const Status s =
          copy_bytes(out->host.data(), static_cast<const char*>(buf) + plan.span.lo, plan.span.hi - plan.span.lo);
      if (s != Status::ok) return mpi::error_class(s);
      counters().spans_copied.fetch_add(1, std::memory_order_relaxed);
      return MPI_SUCCESS;
    }
  }
  return MPI_SUCCESS;
}

int prepare_send(const Plan& plan, const void* buf, int64_t count, MPI_Datatype type, Outgoing* out) {
  if (int rc = reserve_send(plan, buf, count, type, out); rc != MPI_SUCCESS) return rc;
  return fill_send(plan, buf, out);
}

int prepare_recv(const Plan& plan, void* buf, int64_t count, MPI_Datatype type, Incoming* in) {
  in->buffer = buf;
  in->count = count;
  in->type = type;
  in->plan = plan;
  in->user = buf;
  in->user_count = count;
  in->user_type = type;
  switch (plan.path) {
    case Path::library: return MPI_SUCCESS;
    case Path::host_pack:
      in->host = Staging::host(plan.bytes);
      if (!in->host) {
        in->plan.path = Path::library;  // the library unpacks it after all
        return MPI_SUCCESS;
      }
      in->buffer = in->host.data();
      break;
    case Path::device_pack: {
      in->device = DeviceMessage(plan.device, plan.method);
      const Status s = in->device.reserve(plan.bytes);
      if (s != Status::ok) return mpi::error_class(s);
      in->buffer = in->device.mpi_buffer();
      break;
    }
    case Path::device_span: {
      // The library unpacks with the user's datatype into a host copy of
      // the span (filled first: elements that do not arrive keep their
      // values); complete_recv writes exactly the datatype's bytes back.
      const Status s =
          copy_span_to_host(plan.device, static_cast<const char*>(buf), plan.span.lo, plan.span.hi, &in->host);
      if (s != Status::ok) return mpi::error_class(s);
      in->buffer = in->host.data() - plan.span.lo;
      counters().spans_copied.fetch_add(1, std::memory_order_relaxed);
      return MPI_SUCCESS;
    }
  }
  in->count = plan.bytes;
  in->type = MPI_PACKED;
  return MPI_SUCCESS;
}

int refresh_recv(Incoming& in) {
  if (in.plan.path != Path::device_span) return MPI_SUCCESS;
  const Span& span = in.plan.span;
  const Status s = copy_bytes(in.host.data(), static_cast<const char*>(in.user) + span.lo, span.hi - span.lo);
  if (s != Status::ok) return mpi::error_class(s);
  counters().spans_copied.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int complete_recv(Incoming& in, const MPI_Status& status, bool wait) {
  const Plan& plan = in.plan;
  if (plan.path == Path::library) return MPI_SUCCESS;
  int received = 0;
  if (mpi::real().MPI_Get_count(&status, MPI_BYTE, &received) != MPI_SUCCESS || received <= 0) return MPI_SUCCESS;
  counters().recvs_unpacked.fetch_add(1, std::memory_order_relaxed);
  if (plan.path == Path::host_pack) {
    unpack_host(plan.layout.block(), in.host.data(), in.user, 0, received);
    return MPI_SUCCESS;
  }
  if (plan.path == Path::device_span) {
    const Status s =
        write_exactly(static_cast<char*>(in.user), in.host.data() - plan.span.lo, in.user_count, in.user_type);
    return s == Status::ok ? MPI_SUCCESS : mpi::error_class(s);
  }
  const DevicePart part = whole(plan, in.user);
  const Status s = device_unpack(in.device, &part, 1, received, wait);
  return s == Status::ok ? MPI_SUCCESS : mpi::error_class(s);
}

}  // namespace strata::interposer
