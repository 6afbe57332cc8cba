// What the interposer did, for tests, logs and the preload's query function.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata::interposer {

struct Counters {
  std::atomic<uint64_t> packs_by_strata{0};
  std::atomic<uint64_t> sends_packed{0};
  std::atomic<uint64_t> recvs_unpacked{0};
  std::atomic<uint64_t> spans_copied{0};  // device data moved through a host copy of its span
  std::atomic<uint64_t> requests_started{0};
  std::atomic<uint64_t> requests_completed{0};
  std::atomic<uint64_t> types_reducible{0};
  std::atomic<uint64_t> types_irreducible{0};
  std::atomic<uint64_t> collectives_by_strata{0};
  std::atomic<uint64_t> collectives_staged{0};
  std::atomic<uint64_t> sends_deferred{0};        // MPI_Isend packed and posted at the next MPI call
  std::atomic<uint64_t> deferred_flushes{0};      // flushes that packed deferred device sends
  std::atomic<uint64_t> parts_by_copy_engine{0};  // strided device parts moved by copy-engine boxes, not kernels
};

Counters& counters();

// The two counts every intercepted call makes, kept per thread: each of
// the first kCallSlots threads owns a slot it writes with plain stores (no
// locked instruction on the pass-through path); later threads share one
// slot, counted atomically. Totals sum the slots.
constexpr int kCallSlots = 256;
struct alignas(64) CallSlot {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> passed{0};  // forwarded untouched (STRATA_DISABLE=1)
};
extern CallSlot g_call_slots[kCallSlots + 1];
CallSlot* claim_call_slot() noexcept;
__attribute__((always_inline)) inline void count_call(bool passed_through) noexcept {
  // initial-exec: one instruction, not a __tls_get_addr call (as fault/hooks.hpp)
  static thread_local CallSlot* slot __attribute__((tls_model("initial-exec"))) = nullptr;
  if (__builtin_expect(slot == nullptr, 0)) slot = claim_call_slot();
  if (slot != &g_call_slots[kCallSlots]) {
    slot->calls.store(slot->calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (passed_through) slot->passed.store(slot->passed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    slot->calls.fetch_add(1, std::memory_order_relaxed);
    if (passed_through) slot->passed.fetch_add(1, std::memory_order_relaxed);
  }
}
uint64_t calls_intercepted() noexcept;
uint64_t calls_passed_through() noexcept;

}  // namespace strata::interposer
