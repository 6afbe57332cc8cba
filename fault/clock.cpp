#include "fault/clock.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstring>

namespace strata::fault {
namespace {

bool invariant_tsc() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx >> 8) & 1u;
#else
  return false;
#endif
}

// The kernel's word: it only keeps "tsc" as the clock source after checking
// the counter against others (virtual machines often hide the CPUID bit
// while their TSC is stable: clock_gettime there may cost 3-4 TSC reads).
bool kernel_trusts_tsc() {
  char source[32] = {0};
  if (FILE* f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r")) {
    const bool got = std::fgets(source, sizeof(source), f) != nullptr;
    std::fclose(f);
    if (got && std::strncmp(source, "tsc", 3) == 0 && (source[3] == '\n' || source[3] == 0)) return true;
  }
  return false;
}

const char* g_source = "clock_gettime";

}  // namespace

const char* tick_source() { return g_source; }

void calibrate_ticks() {
  using namespace ticks_detail;
  static bool done = false;
  if (done) return;
  done = true;
  const bool cpuid = invariant_tsc();
  if (!cpuid && !kernel_trusts_tsc()) return;
#if defined(__x86_64__) || defined(__i386__)
  g_base_ns = now_ns();
  g_base_ticks = __rdtsc();
  int64_t t = g_base_ns;
  while (t - g_base_ns < 2000000) t = now_ns();
  const uint64_t k = __rdtsc();
  if (k <= g_base_ticks) return;
  g_ns_per_tick.store(static_cast<double>(t - g_base_ns) / static_cast<double>(k - g_base_ticks));
  g_tsc = true;
  g_source = cpuid ? "tsc (CPUID invariant)" : "tsc (kernel clock source)";
#endif
}

void refine_ticks() {
  using namespace ticks_detail;
#if defined(__x86_64__) || defined(__i386__)
  if (!g_tsc) return;
  const int64_t t = now_ns();
  const uint64_t k = __rdtsc();
  if (t - g_base_ns < 1000000000 || k <= g_base_ticks) return;  // the start-up estimate until a second has passed
  g_ns_per_tick.store(static_cast<double>(t - g_base_ns) / static_cast<double>(k - g_base_ticks),
                      std::memory_order_relaxed);
#endif
}

}  // namespace strata::fault
