// The recorder's clocks.
//
// now_ns(): CLOCK_MONOTONIC in nanoseconds (a vDSO call, ~25 ns). Ranks on
// one node share it; across nodes the agent estimates each rank's offset to
// the coordinator (oob ping) and the coordinator corrects times by it.
//
// now_ticks(): what the hooks stamp records with, two per call, so it must
// be cheap: the time-stamp counter (~10 ns) where the CPU says it is
// invariant (constant rate, running in every C-state: CPUID 0x80000007
// EDX bit 8) or the kernel uses it as its clock source (it checked it),
// else now_ns() itself. Ticks become nanoseconds on the
// CLOCK_MONOTONIC scale with a rate measured at start-up and refined by
// the agent against CLOCK_MONOTONIC over the whole run (ticks_to_ns).
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace strata::fault {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace ticks_detail {
inline bool g_tsc = false;  // set once at start-up, before any hook runs
inline int64_t g_base_ns = 0;
inline uint64_t g_base_ticks = 0;
inline std::atomic<double> g_ns_per_tick{1.0};
}  // namespace ticks_detail

inline uint64_t now_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  if (ticks_detail::g_tsc) return __rdtsc();
#endif
  return static_cast<uint64_t>(now_ns());
}

// Absolute ticks -> CLOCK_MONOTONIC nanoseconds (0 stays 0). Async-signal-safe.
inline int64_t ticks_to_ns(int64_t ticks) {
  if (!ticks_detail::g_tsc || ticks == 0) return ticks;
  const double rate = ticks_detail::g_ns_per_tick.load(std::memory_order_relaxed);
  const double since =
      static_cast<double>(static_cast<int64_t>(static_cast<uint64_t>(ticks) - ticks_detail::g_base_ticks));
  return ticks_detail::g_base_ns + static_cast<int64_t>(since * rate);
}

// A duration in ticks -> nanoseconds.
inline int64_t tick_span_ns(int64_t span) {
  if (!ticks_detail::g_tsc) return span;
  return static_cast<int64_t>(static_cast<double>(span) * ticks_detail::g_ns_per_tick.load(std::memory_order_relaxed));
}

// A duration in nanoseconds -> ticks (the start-up rate).
inline uint64_t ns_to_ticks(int64_t ns) {
  if (ns <= 0) return 0;
  if (!ticks_detail::g_tsc) return static_cast<uint64_t>(ns);
  return static_cast<uint64_t>(static_cast<double>(ns) / ticks_detail::g_ns_per_tick.load(std::memory_order_relaxed));
}

// Chooses the tick source and measures its rate (about 2 ms). Call once,
// before any hook runs.
void calibrate_ticks();
// What now_ticks() reads, in words (for logs and the benchmark).
const char* tick_source();
// Refines the rate against CLOCK_MONOTONIC over the time since calibration
// (the agent, each tick).
void refine_ticks();

}  // namespace strata::fault
