#include "interposer/transfer/counters.hpp"

namespace strata::interposer {

Counters& counters() {
  static Counters c;
  return c;
}

CallSlot g_call_slots[kCallSlots + 1];

CallSlot* claim_call_slot() noexcept {
  static std::atomic<int> next{0};
  const int mine = next.fetch_add(1, std::memory_order_relaxed);
  return &g_call_slots[mine < kCallSlots ? mine : kCallSlots];
}

uint64_t calls_intercepted() noexcept {
  uint64_t n = 0;
  for (const CallSlot& s : g_call_slots) n += s.calls.load(std::memory_order_relaxed);
  return n;
}

uint64_t calls_passed_through() noexcept {
  uint64_t n = 0;
  for (const CallSlot& s : g_call_slots) n += s.passed.load(std::memory_order_relaxed);
  return n;
}

}  // namespace strata::interposer
