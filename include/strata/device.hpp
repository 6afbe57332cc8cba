// One device API for CUDA and HIP, as applications see it: what kind of
// memory a pointer is, and Strata's pack/unpack kernels for any canonical
// strided block (strata/layout.hpp) on the caller's stream. In a build
// without CUDA or HIP every call reports Status::not_supported and
// classify() says host, unless the device stand-in is on
// (STRATA_FAKE_DEVICE, for tests: docs/testing.md).
#pragma once

#include <strata/export.h>
#include <strata/layout.hpp>
#include <strata/status.hpp>

#include <cstdint>

namespace strata::device {

enum class MemoryKind {
  host,         // ordinary (pageable) host memory, or unknown to the runtime
  pinned_host,  // page-locked host memory (cudaMallocHost/hipHostMalloc/registered)
  device,       // device memory (cudaMalloc/hipMalloc, or an IPC mapping of it)
  managed,      // managed (unified) memory
};

struct Pointer {
  MemoryKind kind = MemoryKind::host;
  int device = -1;  // the owning device for device and managed memory
};

// Is a GPU backend compiled in and a device visible?
STRATA_API bool available() noexcept;
// "cuda", "hip" or "none" ("fake" under the device stand-in of a build
// without CUDA or HIP, STRATA_FAKE_DEVICE: tests only).
STRATA_API const char* backend() noexcept;

// What `ptr` points at. Cached: one runtime query per device allocation,
// then a lookup; host memory costs one query per 2 MiB of address space.
STRATA_API Pointer classify(const void* ptr) noexcept;

// Copies the packed bytes of blocks [block_begin, block_end) of `layout`
// applied at `base` into `packed` (which then holds (block_end -
// block_begin) * layout.block bytes), asynchronously on `stream` (a
// cudaStream_t or hipStream_t; null: the default stream). `base` and
// `packed` may be device, managed or mapped pinned host memory. block_end
// = -1: to the last block.
STRATA_API Status pack(const StridedBlock& layout, const void* base, void* packed, void* stream,
                       int64_t block_begin = 0, int64_t block_end = -1) noexcept;
STRATA_API Status unpack(const StridedBlock& layout, const void* packed, void* base, void* stream,
                         int64_t block_begin = 0, int64_t block_end = -1) noexcept;

}  // namespace strata::device
