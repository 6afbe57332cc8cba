// strata::gpu in a build without CUDA or HIP: no device, so every call that
// would need one answers Status::not_supported and leaves its outputs alone;
// the questions with an obvious answer get it (no device, host memory).
// No runtime header is included here.
//
// With STRATA_FAKE_DEVICE=N (tests) every call goes to the device stand-in
// instead (fake_device.hpp): N devices whose memory the host cannot touch.
#include "portability/gpu/fake_device.hpp"
#include "portability/gpu/gpu_api.hpp"

namespace strata::gpu {

// The stand-in's answer when it is on, else `otherwise`.
#define STRATA_FAKE_OR(call, otherwise) return fake::enabled() ? fake::call : (otherwise)

bool available() noexcept { return fake::enabled(); }
const char* backend_name() noexcept { return fake::enabled() ? "fake" : "none"; }

Status device_count(int* count) noexcept {
  if (count == nullptr) {
    return Status::invalid_argument;
  }
  *count = fake::count();
  return Status::ok;
}

constexpr Status kNo = Status::not_supported;

Status can_access_peer(int device, int peer, bool* yes) noexcept {
  if (yes == nullptr) return Status::invalid_argument;
  if (!fake::enabled()) return kNo;
  *yes = device >= 0 && peer >= 0 && device < fake::count() && peer < fake::count();
  return Status::ok;
}

Status set_device(int device) noexcept { STRATA_FAKE_OR(set_device(device), kNo); }
Status get_device(int* device) noexcept { STRATA_FAKE_OR(get_device(device), kNo); }
Status properties(int device, DeviceProperties* out) noexcept { STRATA_FAKE_OR(properties(device, out), kNo); }
Status device_synchronize() noexcept { return fake::enabled() ? Status::ok : kNo; }
bool context_active() noexcept { return fake::enabled() && fake::allocated_any(); }
// The stand-in has no driver to leave unstarted.
void defer_runtime_until_driver_loaded() noexcept {}

Status stream_create(Stream* s, bool ordered) noexcept { STRATA_FAKE_OR(stream_create(s, ordered), kNo); }
Status stream_destroy(Stream s) noexcept { STRATA_FAKE_OR(stream_destroy(s), kNo); }
Status stream_synchronize(Stream s) noexcept { STRATA_FAKE_OR(check_stream(s, "stream_synchronize"), kNo); }
Status event_create(Event* e, bool timing) noexcept { STRATA_FAKE_OR(event_create(e, timing), kNo); }
Status event_destroy(Event e) noexcept { STRATA_FAKE_OR(event_destroy(e), kNo); }
Status event_record(Event e, Stream s) noexcept { STRATA_FAKE_OR(event_record(e, s), kNo); }
Status event_synchronize(Event e) noexcept { STRATA_FAKE_OR(event_synchronize(e), kNo); }
Status event_query(Event e, bool* done) noexcept { STRATA_FAKE_OR(event_query(e, done), kNo); }
Status event_elapsed_ms(Event a, Event b, float* ms) noexcept { STRATA_FAKE_OR(event_elapsed_ms(a, b, ms), kNo); }
Status stream_wait_event(Stream s, Event e) noexcept { STRATA_FAKE_OR(stream_wait_event(s, e), kNo); }

Status malloc_device(void** p, size_t bytes) noexcept { STRATA_FAKE_OR(malloc_device(p, bytes), kNo); }
Status free_device(void* p) noexcept { STRATA_FAKE_OR(free_device(p), kNo); }
Status malloc_pinned(void** p, size_t bytes, bool mapped) noexcept {
  STRATA_FAKE_OR(malloc_pinned(p, bytes, mapped), kNo);
}
Status free_pinned(void* p) noexcept { STRATA_FAKE_OR(free_pinned(p), kNo); }
Status mapped_device_pointer(void* h, void** d) noexcept { STRATA_FAKE_OR(mapped_device_pointer(h, d), kNo); }
Status memcpy_async(void* dst, const void* src, size_t bytes, Stream s) noexcept {
  STRATA_FAKE_OR(memcpy_async(dst, src, bytes, s), kNo);
}
Status memset_async(void* dst, int value, size_t bytes, Stream s) noexcept {
  STRATA_FAKE_OR(memset_async(dst, value, bytes, s), kNo);
}
Status copy_box_async(const detail::BoxCopy& box, char* user, char* packed, bool pack, Stream s) noexcept {
  STRATA_FAKE_OR(copy_box_async(box, user, packed, pack, s), kNo);
}

device::Pointer classify(const void* p) noexcept { STRATA_FAKE_OR(classify(p), device::Pointer{}); }
bool backend_present() noexcept {
  const bool present = fake::enabled();
  hints::g_backend.store(present ? 1 : 0, std::memory_order_relaxed);
  return present;
}
void forget_classifications() noexcept {
  if (fake::enabled()) fake::forget_classifications();
}
uint64_t classify_runtime_queries() noexcept { STRATA_FAKE_OR(classify_runtime_queries(), uint64_t{0}); }
void* host_view(const void* p) noexcept { STRATA_FAKE_OR(host_view(p), const_cast<void*>(p)); }

Status allocation_of(const void* p, AllocationRange* out) noexcept { STRATA_FAKE_OR(allocation_of(p, out), kNo); }
Status ipc_get_handle(void* p, IpcHandle* h) noexcept { STRATA_FAKE_OR(ipc_get_handle(p, h), kNo); }
Status ipc_open(const IpcHandle& h, void** p) noexcept { STRATA_FAKE_OR(ipc_open(h, p), kNo); }
Status ipc_close(void* p) noexcept { STRATA_FAKE_OR(ipc_close(p), kNo); }
Status ipc_event_create(Event* e) noexcept { STRATA_FAKE_OR(ipc_event_create(e), kNo); }
Status ipc_event_get_handle(Event e, IpcEventHandle* h) noexcept { STRATA_FAKE_OR(ipc_event_get_handle(e, h), kNo); }
Status ipc_event_open(const IpcEventHandle& h, Event* e) noexcept { STRATA_FAKE_OR(ipc_event_open(h, e), kNo); }

// The stand-in has no graphs: not_supported either way.

Status capture_begin(Stream) noexcept { return kNo; }
Status capture_end(Stream, GraphExec*) noexcept { return kNo; }
Status is_capturing(Stream, bool* capturing) noexcept {
  *capturing = false;
  return Status::ok;
}
Status graph_launch(GraphExec, Stream) noexcept { return kNo; }
Status graph_destroy(GraphExec) noexcept { return kNo; }

const char* last_error_string() noexcept {
  return fake::enabled() ? fake::last_error() : "no GPU backend in this build";
}

#undef STRATA_FAKE_OR

}  // namespace strata::gpu
