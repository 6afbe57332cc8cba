// The device runtime behind Strata, backend-neutral: streams, events,
// device and pinned memory, copies, IPC handles, device properties. One
// implementation (gpu_runtime.cu) compiles for CUDA with nvcc and for HIP
// with hipcc through runtime_names.hpp; without either, gpu_stub.cpp answers
// Status::not_supported everywhere, or, with STRATA_FAKE_DEVICE=N (tests),
// forwards to the device stand-in (fake_device.hpp). Every call checks the runtime's return
// code; the first failure is logged with the runtime's own message.
#pragma once

#include <strata/device.hpp>
#include <strata/status.hpp>

#include "portability/gpu/host_hints.hpp"
#include "portability/layout/box_copies.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::gpu {

using Stream = void*;  // cudaStream_t / hipStream_t
using Event = void*;   // cudaEvent_t / hipEvent_t

struct DeviceProperties {
  std::string name;
  int sm_count = 0;
  int warp_size = 0;
  int max_threads_per_block = 0;
  int64_t max_grid[3] = {0, 0, 0};
  int64_t total_memory = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int pci_domain = 0;
  int pci_bus = 0;
  int pci_device = 0;
  int multi_gpu_board = 0;         // 1 when the device is one of several on one board (MI250X GCDs)
  int multi_gpu_board_group = -1;  // devices of one board share this id
};

// --- devices ----------------------------------------------------------------
bool available() noexcept;  // a backend is built in and a device is visible
const char* backend_name() noexcept;
Status device_count(int* count) noexcept;
// Can kernels and copies on `device` address memory of `peer` (the
// runtime's answer, no context made)? The stand-in's devices all can.
Status can_access_peer(int device, int peer, bool* yes) noexcept;
Status set_device(int device) noexcept;
Status get_device(int* device) noexcept;
Status properties(int device, DeviceProperties* out) noexcept;
// Synchronizes the whole current device (tests and tear-down only).
Status device_synchronize() noexcept;
// Has this process a live context on one of its devices (the program used
// a GPU before asking)? Asks the driver, creates nothing; false where it
// cannot tell.
bool context_active() noexcept;
// A host program (uses_gpus answered no; the interposer at MPI_Init): from
// now on Strata does not start the GPU runtime before the program loads the
// driver itself: until then available() answers false and classify() host
// (no device memory can exist), checked again whenever the program loads
// another library. A plain run of a host program never starts the driver;
// starting it cost each rank a thread, 17 GB of address space and a
// fraction of a second at MPI_Init (seen on 2 x H100).
void defer_runtime_until_driver_loaded() noexcept;

// --- streams and events -------------------------------------------------------
// A stream; `ordered_after_default`: its work also waits for work queued
// before it on the legacy default stream (as cudaMemcpy does), which is what
// an MPI call on device data must do when the application produced the data
// on the default stream. Otherwise non-blocking.
Status stream_create(Stream* stream, bool ordered_after_default = false) noexcept;
Status stream_destroy(Stream stream) noexcept;
Status stream_synchronize(Stream stream) noexcept;
Status event_create(Event* event, bool timing) noexcept;
Status event_destroy(Event event) noexcept;
Status event_record(Event event, Stream stream) noexcept;
Status event_synchronize(Event event) noexcept;
Status event_query(Event event, bool* done) noexcept;
Status event_elapsed_ms(Event start, Event stop, float* ms) noexcept;
Status stream_wait_event(Stream stream, Event event) noexcept;
// Events another process of the node can wait for (IPC events: no timing).
// Another process opens the handle (ipc_event_open; not the exporting
// process, as with memory handles) and gets an event of its own, destroyed
// with event_destroy, whose waits (stream_wait_event, event_synchronize)
// wait for the exporter's most recent record of it at the time of the call.
struct IpcEventHandle {
  unsigned char bytes[64];
};
Status ipc_event_create(Event* event) noexcept;
Status ipc_event_get_handle(Event event, IpcEventHandle* handle) noexcept;
Status ipc_event_open(const IpcEventHandle& handle, Event* event) noexcept;

// --- memory -------------------------------------------------------------------
Status malloc_device(void** ptr, size_t bytes) noexcept;
Status free_device(void* ptr) noexcept;
// Page-locked host memory; `mapped`: also addressable by kernels of every
// device (its device address from mapped_device_pointer).
Status malloc_pinned(void** ptr, size_t bytes, bool mapped) noexcept;
Status free_pinned(void* ptr) noexcept;
Status mapped_device_pointer(void* pinned_host, void** device_ptr) noexcept;
// Copies in either direction (the runtime infers it from the pointers).
Status memcpy_async(void* dst, const void* src, size_t bytes, Stream stream) noexcept;
Status memset_async(void* dst, int value, size_t bytes, Stream stream) noexcept;
// Moves one box of a strided layout (portability/layout/box_copies.hpp)
// between the user's buffer and the packed bytes, on the copy engine (pack:
// user to packed).
Status copy_box_async(const detail::BoxCopy& box, char* user, char* packed, bool pack, Stream stream) noexcept;

// --- pointer classification (cached; see strata/device.hpp) -----------------
device::Pointer classify(const void* ptr) noexcept;
// The hot path's question, lock-free and inline (host_hints.hpp): false
// when `ptr` is certainly not device or managed memory (no device backend,
// or a host granule classify() has answered); true when classify() must be
// asked.
// The slow half of maybe_device: false where nothing is device memory (no
// backend, remembered in hints::g_backend); true where classify() must be
// asked. In a host program that has not loaded the GPU driver
// (defer_runtime_until_driver_loaded) classify() answers host for a pointer
// without starting the runtime, and remembers its granule.
bool backend_present() noexcept;
// The pass-throughs' form, without a call: true only where maybe_device
// would answer false without asking the backend (false before the first
// maybe_device has learnt whether there is one, or its granule).
__attribute__((always_inline)) inline bool surely_host(const void* ptr) noexcept {
  if (ptr == nullptr) return true;
  return hints::g_backend.load(std::memory_order_relaxed) == 0 || hints::known_host(reinterpret_cast<uintptr_t>(ptr));
}
__attribute__((always_inline)) inline bool maybe_device(const void* ptr) noexcept {
  if (ptr == nullptr || hints::known_host(reinterpret_cast<uintptr_t>(ptr))) return false;
  const int backend = hints::g_backend.load(std::memory_order_relaxed);
  return backend > 0 || (backend < 0 && backend_present());
}
// Forgets cached classifications (tests; after the runtime is reset).
void forget_classifications() noexcept;
// For tests: how many times classify() has asked the runtime (cache misses).
uint64_t classify_runtime_queries() noexcept;
// The address at which the host may read or write what `ptr` points at:
// under the device stand-in of a CPU build (fake_device.hpp), a pointer into
// a stand-in device allocation gives its shadow; everywhere else `ptr`
// itself (CUDA and HIP device memory has no host address at all).
void* host_view(const void* ptr) noexcept;

// --- allocations ----------------------------------------------------------------
// The device allocation holding a pointer: its range, and an id that the
// runtime gives no other allocation in this process's lifetime (a range
// freed and allocated again at the same address gets a new one), which is
// how a cached IPC handle or mapping of a reused range is told from the
// old one (ipc_cache.hpp).
struct AllocationRange {
  void* base = nullptr;
  size_t bytes = 0;
  uint64_t buffer_id = 0;
  int device = -1;
};
// `device_ptr` anywhere in a device allocation (an IPC mapping opened here
// included). Not device memory (host, pinned, managed, unknown):
// invalid_argument, nothing logged above debug. CUDA: one driver query
// (cuPointerGetAttributes: range, buffer id, ordinal), reached through
// cudaGetDriverEntryPoint*; HIP: hipMemGetAddressRange and
// hipPointerGetAttribute(HIP_POINTER_ATTRIBUTE_BUFFER_ID); the stand-in:
// its allocation table. No backend, or no driver entry point:
// not_supported. `out` is written only on success.
Status allocation_of(const void* device_ptr, AllocationRange* out) noexcept;

// --- IPC ------------------------------------------------------------------------
// A handle names a whole device allocation: ipc_get_handle may be given any
// address in it (ipc_cache.cpp passes the base), and ipc_open, in another
// process of the node, maps the allocation at its base. A process cannot
// open its own handle (CUDA refuses it, and so does the stand-in:
// device_error). The stand-in also refuses a handle whose allocation was
// freed or whose owner exited; CUDA and HIP promise no such check, so a
// reused range is told from the old one by its buffer id (ipc_cache.hpp).
// ipc_close takes what ipc_open gave.
struct IpcHandle {
  unsigned char bytes[64];
};
Status ipc_get_handle(void* device_ptr, IpcHandle* handle) noexcept;
Status ipc_open(const IpcHandle& handle, void** device_ptr) noexcept;
Status ipc_close(void* device_ptr) noexcept;

// --- graphs ---------------------------------------------------------------------
// Capture of the work queued on a stream into an executable graph (CUDA
// graphs / HIP graphs), for callers that replay a step (and tests proving
// that Strata's stream-ordered work can be captured).
using GraphExec = void*;
Status capture_begin(Stream stream) noexcept;
// Is `stream` being captured (false without a GPU backend)?
Status is_capturing(Stream stream, bool* capturing) noexcept;
// Ends the capture and instantiates what was captured.
Status capture_end(Stream stream, GraphExec* exec) noexcept;
Status graph_launch(GraphExec exec, Stream stream) noexcept;
Status graph_destroy(GraphExec exec) noexcept;

// --- the last runtime error, for messages ------------------------------------
const char* last_error_string() noexcept;

// Makes `device` current for a scope (a negative one: no change) and
// restores the caller's at its end. status(): whether `device` could be
// made current (ok where nothing had to change).
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) noexcept {
    if (device >= 0 && get_device(&previous_) == Status::ok && previous_ != device) {
      status_ = set_device(device);
      restore_ = status_ == Status::ok;
    }
  }
  ~ScopedDevice() {
    if (restore_) set_device(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  Status status() const noexcept { return status_; }

 private:
  int previous_ = -1;
  bool restore_ = false;
  Status status_ = Status::ok;
};

}  // namespace strata::gpu
