// The public strata::device API (strata/device.hpp), compiled in every
// build: it forwards to strata::gpu, whose implementation is the CUDA/HIP
// runtime (gpu_runtime.cu) or the stub (gpu_stub.cpp, pack_stub.cpp).
#include <strata/device.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/pack_device.hpp"

namespace strata::device {

bool available() noexcept { return gpu::available(); }

const char* backend() noexcept { return gpu::backend_name(); }

Pointer classify(const void* ptr) noexcept { return gpu::classify(ptr); }

Status pack(const StridedBlock& layout, const void* base, void* packed, void* stream, int64_t block_begin,
            int64_t block_end) noexcept {
  return gpu::pack_async(layout, base, packed, static_cast<gpu::Stream>(stream), block_begin, block_end);
}

Status unpack(const StridedBlock& layout, const void* packed, void* base, void* stream, int64_t block_begin,
              int64_t block_end) noexcept {
  return gpu::unpack_async(layout, packed, base, static_cast<gpu::Stream>(stream), block_begin, block_end);
}

}  // namespace strata::device
