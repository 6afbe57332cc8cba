#include "interposer/transfer/sides.hpp"

#include "base/log.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/exact_write.hpp"
#include "interposer/transfer/stream_from.hpp"
#include "mpi/error_class.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/copies.hpp"

namespace strata::interposer {

mover::DevicePart whole(const Plan& plan, const void* buf) {
  return mover::DevicePart{&plan.layout.block(), static_cast<char*>(const_cast<void*>(buf)), 0};
}

void send_packed(Outgoing* out, const void* packed, int64_t bytes) {
  out->buffer = packed;
  out->count = static_cast<int>(bytes);
  out->type = MPI_PACKED;
  counters().sends_packed.fetch_add(1, std::memory_order_relaxed);
}

int raise_error(MPI_Comm comm, int code, const char* what) {
  if (code == MPI_ERR_TRUNCATE) {  // the program's error, reported as the library would
    STRATA_LOG(debug, kDevice, "%s: the message is longer than the receive buffer", what);
  } else {
    STRATA_LOG(error, kDevice, "%s: Strata's %s step failed", what,
               code == MPI_ERR_NO_MEM ? "staging (out of memory)" : "device");
  }
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
      out->host = mover::Staging::host(plan.bytes);
      if (!out->host) return MPI_SUCCESS;  // the library packs it after all
      send_packed(out, out->host.data(), plan.bytes);
      return MPI_SUCCESS;
    case Path::device_pack: {
      out->device = mover::DeviceMessage(plan.device, plan.method);
      const Status s = out->device.reserve(plan.bytes);
      if (s != Status::ok) return mpi::error_class(s);
      send_packed(out, out->device.mpi_buffer(), plan.bytes);
      return MPI_SUCCESS;
    }
    case Path::device_span: {
      out->host = mover::Staging::acquire(mover::pinned_pool(), plan.span.hi - plan.span.lo);
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
      const mover::DevicePart part = whole(plan, buf);
      const Status s = mover::device_pack(out->device, &part, 1);
      return s == Status::ok ? MPI_SUCCESS : mpi::error_class(s);
    }
    case Path::device_span: {
      const Status s = mover::copy_bytes(out->host.data(), static_cast<const char*>(buf) + plan.span.lo,
                                         plan.span.hi - plan.span.lo);
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

int prepare_send_to(const Plan& plan, const void* buf, int64_t count, MPI_Datatype type, MPI_Comm comm, int dest,
                    Outgoing* out) {
  if (device_direct::takes(plan, comm, dest)) {
    const Status s = out->direct.post(plan, buf);
    if (s == Status::ok) {
      out->buffer = out->direct.descriptor();
      out->count = static_cast<int64_t>(kDirectDescriptorBytes);
      out->type = MPI_BYTE;
      return MPI_SUCCESS;
    }
    if (s != Status::not_supported) return mpi::error_class(s);
  }
  return prepare_send(plan, buf, count, type, out);
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
      in->host = mover::Staging::host(plan.bytes);
      if (!in->host) {
        in->plan.path = Path::library;  // the library unpacks it after all
        return MPI_SUCCESS;
      }
      in->buffer = in->host.data();
      break;
    case Path::device_pack: {
      in->device = mover::DeviceMessage(plan.device, plan.method);
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
          mover::copy_span_to_host(plan.device, static_cast<const char*>(buf), plan.span.lo, plan.span.hi, &in->host);
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
  const Status s = mover::copy_bytes(in.host.data(), static_cast<const char*>(in.user) + span.lo, span.hi - span.lo);
  if (s != Status::ok) return mpi::error_class(s);
  counters().spans_copied.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

namespace {

bool device_or_managed(device::MemoryKind kind) noexcept {
  return kind == device::MemoryKind::device || kind == device::MemoryKind::managed;
}

// A descriptor where the receive's bytes are (direct.hpp): pulls the
// message it names into the receive's buffer; false: the bytes are data.
bool pulled_direct(Incoming& in, MPI_Status& status, const unsigned char* kept, bool wait, int* rc) {
  const Plan& plan = in.plan;
  DirectTarget target{in.user, in.user_count, in.user_type, plan.bytes, nullptr, -1};
  const char* head = nullptr;
  char device_head[kDirectDescriptorBytes];
  switch (plan.path) {
    case Path::device_pack:
      target.device_layout = &plan.layout.block();
      target.device = plan.device;
      head = in.device.mpi_buffer();
      if (in.device.method() == Method::device) {  // a GPU-aware library received into device staging
        if (mover::copy_bytes(device_head, head, sizeof device_head) != Status::ok) return false;
        head = device_head;
      }
      break;
    case Path::host_pack: head = in.host.data(); break;
    case Path::device_span:  // into the host copy of the span; complete_recv writes it back
      target.buffer = in.host.data() - plan.span.lo;
      break;
    case Path::library:  // host memory, pinned or not; a GPU-aware library's device buffers never get descriptors
      if (!gpu::surely_host(in.user) && device_or_managed(gpu::classify(in.user).kind)) return false;
      break;
  }
  if (plan.path == Path::device_span || plan.path == Path::library) {
    int size = 0;
    mpi::real().MPI_Type_size(in.user_type, &size);
    target.capacity = static_cast<int64_t>(size) * in.user_count;
  }
  if (kept != nullptr) head = reinterpret_cast<const char*>(kept);
  return receive_direct(target, head, status, rc, wait);
}

}  // namespace

int complete_recv(Incoming& in, MPI_Status& status, bool wait, const unsigned char* kept) {
  const Plan& plan = in.plan;
  if (plan.path == Path::library && !device_direct::active()) return MPI_SUCCESS;
  int received = 0;
  if (mpi::real().MPI_Get_count(&status, MPI_BYTE, &received) != MPI_SUCCESS || received <= 0) return MPI_SUCCESS;
  if (device_direct::active() && received == static_cast<int>(kDirectDescriptorBytes)) {
    int rc = MPI_SUCCESS;
    if (pulled_direct(in, status, kept, wait, &rc) && (plan.path != Path::device_span || rc != MPI_SUCCESS)) return rc;
  }
  if (plan.path == Path::library) return MPI_SUCCESS;
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
  const mover::DevicePart part = whole(plan, in.user);
  const Status s = mover::device_unpack(in.device, &part, 1, received, wait, received >= stream_from());
  return s == Status::ok ? MPI_SUCCESS : mpi::error_class(s);
}

int complete_host_recv(void* buf, int64_t count, MPI_Datatype type, MPI_Status& status) {
  int received = 0;
  if (mpi::real().MPI_Get_count(&status, MPI_BYTE, &received) != MPI_SUCCESS ||
      received != static_cast<int>(kDirectDescriptorBytes)) {
    return MPI_SUCCESS;
  }
  int cancelled = 0;
  if (mpi::real().MPI_Test_cancelled(&status, &cancelled) == MPI_SUCCESS && cancelled != 0) return MPI_SUCCESS;
  Incoming in;
  (void)prepare_recv(Plan{}, buf, count, type, &in);  // a receive the library serves (Path::library): no staging
  return complete_recv(in, status);
}

int complete_kept_recv(Incoming& in, const unsigned char* bytes, bool descriptor, MPI_Status& status) {
  constexpr int kBytes = static_cast<int>(kDirectDescriptorBytes);
  mpi::real().MPI_Status_set_elements(&status, MPI_BYTE, kBytes);  // what the library delivered
  if (descriptor) return complete_recv(in, status, true, bytes);
  // The program's own bytes: where the library would have put them.
  int size = 0;
  mpi::real().MPI_Type_size(in.type, &size);
  const int64_t capacity = in.type == MPI_PACKED ? in.count : static_cast<int64_t>(size) * in.count;
  if (capacity < kBytes) return MPI_ERR_TRUNCATE;
  if (in.type == MPI_PACKED) {
    if (mover::copy_bytes(in.buffer, bytes, kBytes) != Status::ok) return MPI_ERR_INTERN;
  } else {
    int position = 0;
    const int rc = mpi::real().MPI_Unpack(bytes, kBytes, &position, in.buffer, size > 0 ? kBytes / size : 0, in.type,
                                          MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return rc;
  }
  return complete_recv(in, status);
}

}  // namespace strata::interposer
