// Device pack/unpack in a build without CUDA or HIP: nothing to launch on.
// The launch plan (pack_plan.cpp) is still built and tested everywhere.
#include "portability/gpu/pack_device.hpp"

namespace strata::gpu {

Status pack_async(const StridedBlock&, const void*, void*, Stream, int64_t, int64_t) noexcept {
  return Status::not_supported;
}

Status unpack_async(const StridedBlock&, const void*, void*, Stream, int64_t, int64_t) noexcept {
  return Status::not_supported;
}

Status pack_batch_async(const PackJob*, size_t count, Stream) noexcept {
  return count == 0 ? Status::ok : Status::not_supported;
}

Status unpack_batch_async(const PackJob*, size_t count, Stream) noexcept {
  return count == 0 ? Status::ok : Status::not_supported;
}

}  // namespace strata::gpu
