#include "field_buffer.hpp"

#include <new>

namespace halo3d {

bool FieldBuffer::allocate(MemoryKind memory, std::size_t bytes, std::string& error) {
  if (memory == MemoryKind::Device && !device_memory_supported()) {
    error = "--memory device: this build of strata-halo3d has no device memory support "
            "(built without CUDA or HIP); use --memory host";
    return false;
  }
  try {
    host_.assign((bytes + sizeof(double) - 1) / sizeof(double), 0.0);
  } catch (const std::bad_alloc&) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes for the field";
    return false;
  }
  return true;
}

}  // namespace halo3d
