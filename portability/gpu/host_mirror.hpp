// A host view of a user buffer that may be in GPU memory: host memory is
// used in place; device (or managed) memory is copied into a host buffer
// when the view is opened for reading, and copied back by flush(). For the
// paths that hand GPU data to code that only reads host memory (an MPI
// without GPU support, host algorithms); correct, not fast.
#pragma once

#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"

#include <cstddef>
#include <vector>

namespace strata::gpu {

// Is `p` device or managed memory (null and MPI_IN_PLACE-like sentinels: no)?
bool is_device_memory(const void* p) noexcept;

class HostMirror {
 public:
  // `read`: copy the device bytes in (after the work queued on `stream`).
  Status open(void* user, size_t bytes, bool read, Stream stream) noexcept;
  char* data() const noexcept { return data_; }
  bool mirrored() const noexcept { return !copy_.empty(); }
  // Copies a mirrored buffer back to the device; waits for the copy.
  Status flush(Stream stream) noexcept;

 private:
  void* user_ = nullptr;
  size_t bytes_ = 0;
  char* data_ = nullptr;
  std::vector<char> copy_;
};

}  // namespace strata::gpu
