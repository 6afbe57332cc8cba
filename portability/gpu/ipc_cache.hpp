// Caches of IPC handles (the exporter's side) and of opened IPC mappings
// (the importer's side), over gpu_api.hpp's allocation_of and ipc_*.
//
// Exporter: ipc_export describes a device buffer for another process of the
// node: the handle of the allocation holding it, the allocation's base,
// size and buffer id, and the buffer's offset. The runtime's get-handle
// call is made once per allocation: handles are cached per (base, buffer
// id); an entry for the same base with another id (the range was freed and
// allocated again) is replaced.
//
// Importer: ipc_import maps a peer's allocation and answers its base here;
// the buffer is at base + offset. Mappings are cached per (peer, base,
// buffer id). A mapping of the same peer and base with another buffer id is
// the peer's freed and re-allocated range: it is never used again, it is
// closed and replaced (the new bytes live in another allocation, which the
// old mapping does not show). So is a mapping of the same peer whose range
// a new allocation at another base overlaps (CUDA refuses to open the new
// one while the old is mapped: "already mapped"). The cache holds at most kIpcMaxMappings
// mappings, the least recently used closed first.
//
// Pinning: every successful ipc_import holds its mapping until the matching
// ipc_release: a mapping in use (a copy in flight from it) is never closed,
// by eviction, replacement or ipc_forget_peer; those close it at its last
// release instead. While every cached mapping is in use, imports go past the
// bound rather than fail.
//
// All calls are thread-safe (one lock per side; a runtime call that opens,
// closes or exports is made under it).
#pragma once

#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace strata::gpu {

// What the importer needs: travels inside an MPI message (fixed layout,
// no implicit padding, every byte written by ipc_export).
struct IpcExport {
  IpcHandle handle;    // the allocation's, from the runtime
  uint64_t buffer_id;  // the allocation's id in the exporting process
  uint64_t base;       // the allocation's address in the exporting process
  uint64_t bytes;      // the allocation's size
  uint64_t offset;     // where the buffer starts in the allocation
  int32_t device;      // the exporter's device holding the allocation
  uint32_t reserved;   // 0
};
static_assert(std::is_trivially_copyable<IpcExport>::value, "IpcExport travels as bytes");
static_assert(std::is_standard_layout<IpcExport>::value, "IpcExport travels as bytes");
static_assert(sizeof(IpcExport) == 104, "IpcExport has a fixed layout");

// The bound on cached mappings (importer) and cached handles (exporter).
constexpr size_t kIpcMaxMappings = 256;
constexpr size_t kIpcMaxExports = 4096;

// Describes `device_ptr` (anywhere in a device allocation) for a peer.
// invalid_argument when it is not device memory; the runtime's status when
// it cannot export the allocation (not_supported without a backend,
// device_error e.g. for memory of a stream-ordered pool). `out` is written
// only on success.
Status ipc_export(const void* device_ptr, IpcExport* out) noexcept;

// Maps the allocation `e` describes, exported by `peer` (any id the caller
// keeps unique per peer process, e.g. its rank), and pins the mapping:
// *mapped_base is the allocation's base here (the buffer: + e.offset) until
// ipc_release(*mapped_base). invalid_argument for a malformed descriptor;
// the runtime's status when the handle cannot be opened (the peer exited or
// freed the allocation: nothing is cached then).
Status ipc_import(uint64_t peer, const IpcExport& e, char** mapped_base) noexcept;
// Unpins a mapping ipc_import gave; invalid_argument when it is not one.
Status ipc_release(const char* mapped_base) noexcept;
// Closes the mappings of `peer` (the peer exited or the caller is done with
// it); those in use are closed at their last release.
void ipc_forget_peer(uint64_t peer) noexcept;

struct IpcCacheStats {
  // importer
  uint64_t hits = 0;            // a cached mapping was used
  uint64_t misses = 0;          // none was: a handle was opened (or failed to)
  uint64_t stale_replaced = 0;  // a mapping of a peer's freed range was dropped
  uint64_t evicted = 0;         // mappings closed to keep the bound
  uint64_t opens = 0;           // successful ipc_open calls
  uint64_t closes = 0;          // ipc_close calls
  uint64_t mapped = 0;          // mappings open now (cached and dropped-in-use)
  // exporter
  uint64_t export_hits = 0;
  uint64_t export_misses = 0;  // ipc_get_handle calls
  uint64_t export_stale_replaced = 0;
};
IpcCacheStats ipc_cache_stats() noexcept;

}  // namespace strata::gpu
