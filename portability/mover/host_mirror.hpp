// A host view of a user buffer that may be in GPU memory: host memory is
// used in place; device (or managed) memory is copied into a staging buffer
// of the mover (pinned where it can be, staging.hpp) when the view is
// opened for reading, and copied back by flush(). For the paths that hand
// GPU data to code that only reads host memory (an MPI without GPU
// support, the collectives' host algorithms); correct, not fast.
#pragma once

#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/staging.hpp"

#include <cstddef>

namespace strata::mover {

// Is `p` device or managed memory (null and MPI_IN_PLACE-like sentinels: no)?
bool is_device_memory(const void* p) noexcept;

class HostMirror {
 public:
  // `read`: copy the device bytes in (after the work queued on `stream`).
  Status open(void* user, size_t bytes, bool read, gpu::Stream stream) noexcept;
  char* data() const noexcept { return data_; }
  bool mirrored() const noexcept { return static_cast<bool>(copy_); }
  // Copies a mirrored buffer back to the device; waits for the copy.
  Status flush(gpu::Stream stream) noexcept;

 private:
  void* user_ = nullptr;
  size_t bytes_ = 0;
  char* data_ = nullptr;
  // Back to its pool when the mirror goes: every copy into or out of it was
  // waited for.
  Staging copy_;
};

}  // namespace strata::mover
