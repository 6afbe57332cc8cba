// Where the field lives. Host memory only for now: STRATA_HALO_HAVE_DEVICE
// (0 in this build) is the hook where device memory (CUDA/HIP) plugs in; the
// rest of the program only sees data() for MPI and host_view() for setting up
// and checking the values, with the copies between them in to_device() and
// to_host().
#pragma once

#include "options.hpp"

#include <cstddef>
#include <string>
#include <vector>

#ifndef STRATA_HALO_HAVE_DEVICE
#define STRATA_HALO_HAVE_DEVICE 0
#endif

namespace halo3d {

// True when this build can place the field in device memory.
constexpr bool device_memory_supported() {
  return STRATA_HALO_HAVE_DEVICE != 0;
}

class FieldBuffer {
 public:
  // Allocates `bytes` of `memory`; false with a message in `error` otherwise.
  bool allocate(MemoryKind memory, std::size_t bytes, std::string& error);

  void* data() { return host_.data(); }          // what MPI sends from and receives into
  void* host_view() { return host_.data(); }     // the values as the host sees them
  bool to_device() { return true; }              // host_view() -> data(); nothing for host memory
  bool to_host() { return true; }                // data() -> host_view(); nothing for host memory

 private:
  std::vector<double> host_;  // double-aligned storage for float and double fields
};

}  // namespace halo3d
