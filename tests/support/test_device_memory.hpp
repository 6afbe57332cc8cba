// Device memory for plain MPI test programs (they do not link Strata), one
// interface for two worlds:
//  - compiled with STRATA_TEST_CUDA: the CUDA runtime (a real GPU);
//  - otherwise: the device stand-in of Strata's CPU build, through the
//    strata_fake_device_* entry points of the preloaded libstrata_preload.so
//    (interposer/shim/strata_preload.h), found with dlsym. There is a device
//    only when the interposer is preloaded with STRATA_FAKE_DEVICE=N > 0;
//    its memory faults when the host touches it, so a device pointer that
//    reaches the MPI library is a SIGSEGV.
// Header only: the macro is the including program's.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#if defined(STRATA_TEST_CUDA)
#include <cuda_runtime.h>
#else
#include <dlfcn.h>
#endif

namespace strata_test {

#if defined(STRATA_TEST_CUDA)

inline int test_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}
inline void test_device_select(int device) { cudaSetDevice(device); }
inline void* test_device_alloc(size_t bytes) {
  void* p = nullptr;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
}
inline void test_device_free(void* dev) { cudaFree(dev); }
inline void* test_pinned_alloc(size_t bytes) {
  void* p = nullptr;
  return cudaMallocHost(&p, bytes) == cudaSuccess ? p : nullptr;
}
inline void test_pinned_free(void* host) { cudaFreeHost(host); }
inline void test_device_to(void* dev, const void* host, size_t bytes) {
  cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
}
inline void test_device_from(void* host, const void* dev, size_t bytes) {
  cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
}

#else

namespace detail {

// The stand-in's entry points, null without the interposer.
struct FakeDevice {
  int (*count)() = nullptr;
  int (*select)(int) = nullptr;
  void* (*malloc)(size_t) = nullptr;
  void (*free)(void*) = nullptr;
  int (*memcpy)(void*, const void*, size_t) = nullptr;
  void* (*malloc_host)(size_t) = nullptr;
  void (*free_host)(void*) = nullptr;
  bool complete() const { return count && select && malloc && free && memcpy && malloc_host && free_host; }
};

template <class F>
void find(F* fn, const char* name) {
  *fn = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

inline const FakeDevice& fake_device() {
  static const FakeDevice f = [] {
    FakeDevice d;
    find(&d.count, "strata_fake_device_count");
    find(&d.select, "strata_fake_device_select");
    find(&d.malloc, "strata_fake_device_malloc");
    find(&d.free, "strata_fake_device_free");
    find(&d.memcpy, "strata_fake_device_memcpy");
    find(&d.malloc_host, "strata_fake_device_malloc_host");
    find(&d.free_host, "strata_fake_device_free_host");
    return d.complete() ? d : FakeDevice{};
  }();
  return f;
}

// A copy that fails aborts: a test must not go on with bytes it never got.
inline void copy_or_abort(void* dst, const void* src, size_t bytes, const char* what) {
  const FakeDevice& f = fake_device();
  if (f.memcpy == nullptr || f.memcpy(dst, src, bytes) != 0) {
    std::fprintf(stderr, "%s: strata_fake_device_memcpy(%p, %p, %zu) failed\n", what, dst, src, bytes);
    std::abort();
  }
}

}  // namespace detail

inline int test_device_count() {
  const detail::FakeDevice& f = detail::fake_device();
  return f.complete() ? f.count() : 0;
}
inline void test_device_select(int device) {
  if (test_device_count() > 0) detail::fake_device().select(device);
}
inline void* test_device_alloc(size_t bytes) {
  return test_device_count() > 0 ? detail::fake_device().malloc(bytes) : nullptr;
}
inline void test_device_free(void* dev) {
  if (test_device_count() > 0) detail::fake_device().free(dev);
}
// Page-locked host memory (the stand-in's: null without a stand-in device).
inline void* test_pinned_alloc(size_t bytes) {
  return test_device_count() > 0 ? detail::fake_device().malloc_host(bytes) : nullptr;
}
inline void test_pinned_free(void* host) {
  if (test_device_count() > 0) detail::fake_device().free_host(host);
}
inline void test_device_to(void* dev, const void* host, size_t bytes) {
  detail::copy_or_abort(dev, host, bytes, "test_device_to");
}
inline void test_device_from(void* host, const void* dev, size_t bytes) {
  detail::copy_or_abort(host, dev, bytes, "test_device_from");
}

#endif

inline bool test_device_available() { return test_device_count() > 0; }

}  // namespace strata_test
