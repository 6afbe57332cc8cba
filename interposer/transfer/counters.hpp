// What the interposer did, for tests, logs and the preload's query function.
#pragma once

#include "portability/mover/counters.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace strata::interposer {

// The interposer's event counters, one line each: the member name (also the
// field of strata_preload_counters_t and the key of STRATA_SUMMARY_JSON) and
// what it counts (the row of the STRATA_SUMMARY table). The struct below,
// the C export (shim/counters_export.cpp) and the summary are made from it.
// X: a counter of the interposer's own; MOVER: one the device data mover
// keeps (portability/mover/counters.hpp, same name), read from there. A
// name ending in _ns is a time in nanoseconds (WaitTimer below; the
// summary shows it in seconds, with the time by path).
#define STRATA_INTERPOSER_COUNTERS(X, MOVER)                                                             \
  X(packs_by_strata, "MPI_Pack/MPI_Unpack by Strata's engine")                                           \
  X(sends_packed, "send sides packed by Strata")                                                         \
  X(recvs_unpacked, "receive sides unpacked by Strata")                                                  \
  X(spans_copied, "device data moved as a host copy of its span")                                        \
  X(requests_started, "Strata requests started")                                                         \
  X(requests_completed, "Strata requests completed")                                                     \
  X(types_reducible, "committed types with a strided form")                                              \
  X(types_irreducible, "committed types without one")                                                    \
  X(collectives_by_strata, "collectives run by Strata's algorithms")                                     \
  X(collectives_staged, "collectives on GPU buffers staged through the host")                            \
  X(sends_deferred, "device sends packed at the next MPI call")                                          \
  X(deferred_flushes, "flushes of deferred sends")                                                       \
  MOVER(parts_by_copy_engine, "device parts moved by the copy engine")                                   \
  X(sends_direct, "device sends a node peer pulled through IPC")                                         \
  X(recvs_direct, "receives pulled from a node peer's GPU through IPC")                                  \
  X(direct_rehomed, "direct sends moved to a bounce (the receiver was late)")                            \
  X(flush_pack_ns, "deferred device sends: packing them")                                                \
  X(direct_pull_ns, "device-direct receives: claim, map, pull")                                          \
  X(unpack_wait_ns, "receives: one wait for the queued unpacks")                                         \
  X(receiver_wait_ns, "device-direct sends: waiting for the receiver")                                   \
  MOVER(pinned_allocated, "pinned staging buffers allocated")                                            \
  MOVER(staged_unpinned, "large device messages staged in unpinned memory")                              \
  X(deferred_pack_groups, "deferred device sends: packed groups, each posted before the next is packed") \
  X(recvs_finished_early, "large device receives an MPI_Waitall finished as each arrived")               \
  X(sends_ahead_of_pack, "device-direct sends whose descriptor left before their pack finished")         \
  X(reads_after_event, "device-direct receives ordered after the sender's pack on the GPU")              \
  MOVER(pack_waits_queued, "GPU waits queued for a sender's pack (IPC event records)")                   \
  MOVER(kernel_copies, "contiguous device-to-device pulls copied by the kernels")                        \
  MOVER(staging_evicted, "kept staging buffers freed to make room (a pool's limit reached)")             \
  X(sends_in_chunks, "device-direct sends packed in chunks, each read as soon as it is packed")          \
  X(recvs_in_chunks, "device-direct receives that unpacked the sender's chunks as each was packed")      \
  MOVER(contiguous_by_kernels, "small contiguous device parts moved by a flush's kernel launch")

// A counter the mover keeps, read like the interposer's own (load()).
class MoverCount {
 public:
  explicit constexpr MoverCount(std::atomic<uint64_t> mover::Counters::*member) : member_(member) {}
  uint64_t load() const { return (mover::counters().*member_).load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> mover::Counters::*member_;
};

struct Counters {
  // `name` declares a member: it cannot be parenthesised.
  // NOLINTNEXTLINE(bugprone-macro-parentheses)
#define STRATA_COUNTER_MEMBER(name, what) std::atomic<uint64_t> name{0};
  // NOLINTNEXTLINE(bugprone-macro-parentheses)
#define STRATA_MOVER_MEMBER(name, what) MoverCount name{&mover::Counters::name};
  STRATA_INTERPOSER_COUNTERS(STRATA_COUNTER_MEMBER, STRATA_MOVER_MEMBER)
#undef STRATA_MOVER_MEMBER
#undef STRATA_COUNTER_MEMBER
};

Counters& counters();

// Whether a counter's name says it holds nanoseconds (…_ns).
constexpr bool is_time_counter(const char* name) {
  size_t n = 0;
  while (name[n] != '\0') ++n;
  return n > 3 && name[n - 3] == '_' && name[n - 2] == 'n' && name[n - 1] == 's';
}

// Adds the nanoseconds from its construction to its end to a time counter:
// where the device path's time goes (a wait for the device, for a
// receiver), which STRATA_SUMMARY shows. Two clock reads; only on paths
// that move device data, never on a pass-through.
class WaitTimer {
 public:
  explicit WaitTimer(std::atomic<uint64_t>& total) noexcept : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~WaitTimer() {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
    total_.fetch_add(static_cast<uint64_t>(ns.count()), std::memory_order_relaxed);
  }
  WaitTimer(const WaitTimer&) = delete;
  WaitTimer& operator=(const WaitTimer&) = delete;

 private:
  std::atomic<uint64_t>& total_;
  std::chrono::steady_clock::time_point start_;
};

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
// This thread's slot (null until its first counted call). initial-exec:
// one instruction, not a __tls_get_addr call (as fault/hooks.hpp).
inline CallSlot*& my_call_slot() noexcept {
  static thread_local CallSlot* slot __attribute__((tls_model("initial-exec"))) = nullptr;
  return slot;
}
// Would count_own_call count (and say true): this thread has a slot of its
// own? Also for a test that must come between this one and the count (the
// routed collectives' Passes).
__attribute__((always_inline)) inline bool can_count_own_call() noexcept {
  const CallSlot* slot = my_call_slot();
  return slot != nullptr && slot != &g_call_slots[kCallSlots];
}
// The pass-throughs' count: plain stores into a slot of this thread's own;
// false (nothing counted) where that needs a call or a locked instruction
// (the thread's first call, or a thread past kCallSlots): the caller then
// takes its general path, which counts with count_call.
__attribute__((always_inline)) inline bool count_own_call(bool passed_through) noexcept {
  if (!can_count_own_call()) return false;
  CallSlot* slot = my_call_slot();
  slot->calls.store(slot->calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (passed_through) slot->passed.store(slot->passed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return true;
}
__attribute__((always_inline)) inline void count_call(bool passed_through) noexcept {
  CallSlot*& slot = my_call_slot();
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
