// The hot path's question, "may this pointer be device memory?", answered
// inline without a lock: a direct-mapped table of the 2 MiB granules that
// classify() found to hold only pageable host memory, and whether a device
// backend is there at all. Both backends fill it the same way (the GPU
// runtime's pointer cache in gpu_runtime.cu, the device stand-in in
// fake_memory.cpp), so that a host buffer takes the same pass-throughs, in
// the same calls, with or without a GPU. A miss says nothing: classify().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace strata::gpu::hints {

constexpr unsigned kGranuleShift = 21;  // 2 MiB
constexpr size_t kSlots = 4096;

extern std::atomic<uintptr_t> g_host[kSlots];  // granule + 1, or 0
// 1: a backend with a device is there; 0: none (nothing is device memory);
// -1: not known yet (the first maybe_device asks the backend).
extern std::atomic<int> g_backend;

inline bool known_host(uintptr_t a) noexcept {
  const uintptr_t g = a >> kGranuleShift;
  return g_host[g % kSlots].load(std::memory_order_acquire) == g + 1;
}

inline void remember_host(uintptr_t a) noexcept {
  const uintptr_t g = a >> kGranuleShift;
  g_host[g % kSlots].store(g + 1, std::memory_order_release);
}

// Device memory appeared in [base, end): its granules are no longer host.
inline void forget_host(uintptr_t base, uintptr_t end) noexcept {
  if (end <= base) return;
  const uintptr_t g0 = base >> kGranuleShift, g1 = (end - 1) >> kGranuleShift;
  for (uintptr_t g = g0; g <= g1 && g - g0 < kSlots; ++g) {
    uintptr_t expected = g + 1;
    g_host[g % kSlots].compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
  }
}

inline void forget_all() noexcept {
  for (auto& h : g_host) h.store(0, std::memory_order_release);
}

}  // namespace strata::gpu::hints
