// The device stand-in ("fake device") of a build without CUDA or HIP, for
// tests: STRATA_FAKE_DEVICE=N (N > 0) makes gpu_stub.cpp and pack_stub.cpp
// answer as a runtime with N devices instead of "no device", so that every
// device code path of Strata runs on a CPU-only machine.
//
// Device memory is host memory the host cannot touch: each allocation is a
// memfd mapped twice, a device view (PROT_NONE, followed by one more
// PROT_NONE guard page) whose address is handed out, and a shadow view
// (read/write) that only the stand-in's copies and packs use. A device
// pointer that reaches code reading it on the host (an MPI library that is
// not GPU-aware, a host algorithm) faults at once with SIGSEGV, where a real
// GPU would give wrong data, a fault or nothing. Streams and events are
// handles; work runs synchronously at the call. Pinned memory is page-aligned
// host memory whose device address (mapped) is the host address. IPC works
// across processes of one user (fake_ipc.cpp): another process maps the
// same memfd twice in the same way.
//
// gpu_stub.cpp forwards to these calls when enabled(); their contracts are
// those of gpu_api.hpp. Failures are Status::device_error with a message in
// last_error(), logged once where detected, as gpu_runtime.cu does.
#pragma once

#include <strata/device.hpp>
#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"

#include <cstddef>
#include <cstdint>

namespace strata::gpu::fake {

// STRATA_FAKE_DEVICE > 0 (read once).
bool enabled() noexcept;
// The number of stand-in devices (0 when off).
int count() noexcept;

// Records a failure of `call` for last_error() and the log; device_error.
Status fail(const char* call, const char* what) noexcept;
const char* last_error() noexcept;

// --- devices (fake_runtime.cpp) ------------------------------------------------
Status set_device(int device) noexcept;
Status get_device(int* device) noexcept;
Status properties(int device, DeviceProperties* out) noexcept;

// --- streams and events (fake_streams.cpp) ------------------------------------
Status stream_create(Stream* stream, bool ordered_after_default) noexcept;
Status stream_destroy(Stream stream) noexcept;
// ok for the default stream (null) and for live streams of ours.
Status check_stream(Stream stream, const char* call) noexcept;
// Has this process allocated stand-in device memory (its "context": what
// a program that used the GPU before asking has)?
bool allocated_any() noexcept;
Status event_create(Event* event, bool timing) noexcept;
Status event_destroy(Event event) noexcept;
Status event_record(Event event, Stream stream) noexcept;
Status event_synchronize(Event event) noexcept;
Status event_query(Event event, bool* done) noexcept;
Status event_elapsed_ms(Event start, Event stop, float* ms) noexcept;
Status stream_wait_event(Stream stream, Event event) noexcept;
// IPC events: work runs at the call, so every record is complete; the
// handle names the exporting process and the event, and opening it in
// another process gives a recorded event there (in the exporting process:
// device_error, as CUDA answers).
Status ipc_event_create(Event* event) noexcept;
Status ipc_event_get_handle(Event event, IpcEventHandle* handle) noexcept;
Status ipc_event_open(const IpcEventHandle& handle, Event* event) noexcept;

// --- memory (fake_memory.cpp) --------------------------------------------------
Status malloc_device(void** ptr, size_t bytes) noexcept;
Status free_device(void* ptr) noexcept;
Status malloc_pinned(void** ptr, size_t bytes, bool mapped) noexcept;
Status free_pinned(void* ptr) noexcept;
Status mapped_device_pointer(void* pinned_host, void** device_ptr) noexcept;

// Where the host may touch [ptr, ptr + bytes): the shadow of a device
// allocation, else ptr itself. device_error when the range starts in a
// device allocation and runs past its end (a real GPU would fault).
Status host_range(const void* ptr, size_t bytes, char** host, const char* call) noexcept;
// host_range of one byte without the check: any pointer into a device
// allocation -> its shadow; every other pointer unchanged.
void* host_view(const void* ptr) noexcept;

// Device allocations -> device (with their device), pinned -> pinned_host,
// anything else host. The answers come from the allocation table; the
// runtime queries a real backend's cache would make are counted alike
// (allocations made here are known; forget() makes them cost one query
// again; host memory one query per 2 MiB).
device::Pointer classify(const void* ptr) noexcept;
void forget_classifications() noexcept;
uint64_t classify_runtime_queries() noexcept;

// The allocation holding `ptr` (device memory, an IPC mapping included),
// from the table: the bytes asked for, and a serial given to every device
// allocation and IPC mapping of this process.
Status allocation_of(const void* ptr, AllocationRange* out) noexcept;

// For fake_ipc.cpp. The memfd behind the device allocation holding `ptr`
// (kept open while the allocation lives) with what a handle names.
struct ExportedAllocation {
  uintptr_t base = 0;
  size_t bytes = 0;   // asked for
  size_t mapped = 0;  // whole pages
  uint64_t buffer_id = 0;
  int device = -1;
  int fd = -1;
  int creator_pid = 0;  // the process that allocated it (its memfd's name)
};
Status exported_allocation(const void* ptr, ExportedAllocation* out, const char* call) noexcept;
// Maps `fd` (a memfd of `mapped` bytes) as a local allocation does: a
// PROT_NONE device view and guard page, a read/write shadow; entered in the
// table as an IPC mapping of `bytes` on `device`. `fd` stays the caller's.
Status map_ipc(int fd, size_t bytes, size_t mapped, int device, void** view) noexcept;
// Unmaps and forgets an IPC mapping (its base, as map_ipc gave it).
Status unmap_ipc(void* view) noexcept;

// --- IPC (fake_ipc.cpp) -----------------------------------------------------------
// A handle names the owner's process, the memfd's descriptor there and its
// inode; ipc_open opens /proc/<pid>/fd/<fd> (same user, the owner alive)
// and checks that it is still the same memfd (its inode and name carry the
// allocation's serial) before mapping it.
Status ipc_get_handle(void* device_ptr, IpcHandle* handle) noexcept;
Status ipc_open(const IpcHandle& handle, void** device_ptr) noexcept;
Status ipc_close(void* device_ptr) noexcept;

// --- copies (fake_copies.cpp) ----------------------------------------------------
Status memcpy_async(void* dst, const void* src, size_t bytes, Stream stream) noexcept;
Status memset_async(void* dst, int value, size_t bytes, Stream stream) noexcept;
Status copy_box_async(const detail::BoxCopy& box, char* user, char* packed, bool pack, Stream stream) noexcept;

}  // namespace strata::gpu::fake
