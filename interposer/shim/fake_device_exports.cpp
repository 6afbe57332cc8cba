// The device stand-in's C entry points (strata_preload.h), for test
// programs that do not link Strata and find these with dlsym. They answer
// "off" (0, null, -1) unless the build is one without CUDA or HIP and
// STRATA_FAKE_DEVICE is set: a real GPU is for the programs' own runtime.
#include "interposer/shim/strata_preload.h"

#include <strata/export.h>

#include "portability/gpu/gpu_api.hpp"

#include <cstring>

namespace {

namespace gpu = strata::gpu;
using strata::Status;

bool stand_in() noexcept { return std::strcmp(gpu::backend_name(), "fake") == 0; }

}  // namespace

extern "C" {

STRATA_API int strata_fake_device_count(void) {
  int n = 0;
  return stand_in() && gpu::device_count(&n) == Status::ok ? n : 0;
}

STRATA_API int strata_fake_device_select(int device) {
  return stand_in() && gpu::set_device(device) == Status::ok ? 0 : -1;
}

STRATA_API void* strata_fake_device_malloc(size_t bytes) {
  void* p = nullptr;
  return stand_in() && gpu::malloc_device(&p, bytes) == Status::ok ? p : nullptr;
}

STRATA_API void strata_fake_device_free(void* ptr) {
  if (stand_in()) (void)gpu::free_device(ptr);
}

STRATA_API void* strata_fake_device_malloc_host(size_t bytes) {
  void* p = nullptr;
  return stand_in() && gpu::malloc_pinned(&p, bytes, false) == Status::ok ? p : nullptr;
}

STRATA_API void strata_fake_device_free_host(void* ptr) {
  if (stand_in()) (void)gpu::free_pinned(ptr);
}

STRATA_API int strata_fake_device_memcpy(void* dst, const void* src, size_t bytes) {
  if (!stand_in()) return -1;
  if (gpu::memcpy_async(dst, src, bytes, nullptr) != Status::ok) return -1;
  return gpu::stream_synchronize(nullptr) == Status::ok ? 0 : -1;
}

}  // extern "C"
