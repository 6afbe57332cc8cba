// strata::gpu in a build without CUDA or HIP: no device, so every call that
// would need one answers Status::not_supported and leaves its outputs alone;
// the questions with an obvious answer get it (no device, host memory).
// No runtime header is included here.
#include "portability/gpu/gpu_api.hpp"

namespace strata::gpu {

bool available() noexcept { return false; }
const char* backend_name() noexcept { return "none"; }

Status device_count(int* count) noexcept {
  if (count == nullptr) {
    return Status::invalid_argument;
  }
  *count = 0;
  return Status::ok;
}

Status set_device(int) noexcept { return Status::not_supported; }
Status get_device(int*) noexcept { return Status::not_supported; }
Status properties(int, DeviceProperties*) noexcept { return Status::not_supported; }
Status device_synchronize() noexcept { return Status::not_supported; }

Status stream_create(Stream*, bool) noexcept { return Status::not_supported; }
Status stream_destroy(Stream) noexcept { return Status::not_supported; }
Status stream_synchronize(Stream) noexcept { return Status::not_supported; }
Status event_create(Event*, bool) noexcept { return Status::not_supported; }
Status event_destroy(Event) noexcept { return Status::not_supported; }
Status event_record(Event, Stream) noexcept { return Status::not_supported; }
Status event_synchronize(Event) noexcept { return Status::not_supported; }
Status event_query(Event, bool*) noexcept { return Status::not_supported; }
Status event_elapsed_ms(Event, Event, float*) noexcept { return Status::not_supported; }
Status stream_wait_event(Stream, Event) noexcept { return Status::not_supported; }

Status malloc_device(void**, size_t) noexcept { return Status::not_supported; }
Status free_device(void*) noexcept { return Status::not_supported; }
Status malloc_pinned(void**, size_t, bool) noexcept { return Status::not_supported; }
Status free_pinned(void*) noexcept { return Status::not_supported; }
Status mapped_device_pointer(void*, void**) noexcept { return Status::not_supported; }
Status memcpy_async(void*, const void*, size_t, Stream) noexcept { return Status::not_supported; }
Status memset_async(void*, int, size_t, Stream) noexcept { return Status::not_supported; }
Status copy_box_async(const detail::BoxCopy&, char*, char*, bool, Stream) noexcept { return Status::not_supported; }

device::Pointer classify(const void*) noexcept { return device::Pointer{}; }
void forget_classifications() noexcept {}
uint64_t classify_runtime_queries() noexcept { return 0; }

Status ipc_get_handle(void*, IpcHandle*) noexcept { return Status::not_supported; }
Status ipc_open(const IpcHandle&, void**) noexcept { return Status::not_supported; }
Status ipc_close(void*) noexcept { return Status::not_supported; }

Status capture_begin(Stream) noexcept { return Status::not_supported; }
Status capture_end(Stream, GraphExec*) noexcept { return Status::not_supported; }
Status is_capturing(Stream, bool* capturing) noexcept {
  *capturing = false;
  return Status::ok;
}
Status graph_launch(GraphExec, Stream) noexcept { return Status::not_supported; }
Status graph_destroy(GraphExec) noexcept { return Status::not_supported; }

const char* last_error_string() noexcept { return "no GPU backend in this build"; }

}  // namespace strata::gpu
