// A small table from MPI handles (communicators, datatypes: a pointer in
// Open MPI, an int in MPICH) to one word, read without a lock: the hot
// paths ask "what do I know of this handle?" on every call. Open addressing
// with linear probing; entries are never moved, so a read is a few plain
// atomic loads; writes take a mutex. A value of 0 means "nothing known", so
// forgetting a handle (when MPI frees it) stores 0 and keeps the key. A full
// neighbourhood stops remembering: the caller then takes its slow path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace strata {

template <size_t Slots, int Probes = 16>
class HandleTable {
  static_assert((Slots & (Slots - 1)) == 0, "Slots must be a power of two");

 public:
  template <class Handle>
  uint64_t find(Handle handle) const noexcept {
    const uint64_t key = key_of(handle);
    size_t i = home_of(key);
    for (int p = 0; p < Probes; ++p, i = (i + 1) & (Slots - 1)) {
      const uint64_t k = slots_[i].key.load(std::memory_order_acquire);
      if (k == key) return slots_[i].value.load(std::memory_order_acquire);
      if (k == 0) return 0;
    }
    return 0;
  }

  template <class Handle>
  void set(Handle handle, uint64_t value) noexcept {
    const uint64_t key = key_of(handle);
    std::lock_guard<std::mutex> lock(write_);
    size_t i = home_of(key);
    for (int p = 0; p < Probes; ++p, i = (i + 1) & (Slots - 1)) {
      const uint64_t k = slots_[i].key.load(std::memory_order_relaxed);
      if (k == key || k == 0) {
        slots_[i].value.store(value, std::memory_order_release);
        slots_[i].key.store(key, std::memory_order_release);
        return;
      }
    }
  }

  template <class Handle>
  void forget(Handle handle) noexcept {
    if (find(handle) != 0) set(handle, 0);
  }

 private:
  template <class Handle>
  static uint64_t key_of(Handle handle) {
    // A handle is a pointer (Open MPI) or an integer (MPICH): its bits are
    // the key, whichever it is.
    // NOLINTNEXTLINE(bugprone-sizeof-expression)
    static_assert(sizeof(Handle) <= sizeof(uint64_t), "handle wider than 64 bits");
    uint64_t bits = 0;
    std::memcpy(&bits, &handle, sizeof handle);  // NOLINT(bugprone-sizeof-expression)
    return bits + 1;                             // 0 marks an empty slot
  }
  static size_t home_of(uint64_t key) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 40) & (Slots - 1); }
  struct Slot {
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> value{0};
  };
  Slot slots_[Slots];
  std::mutex write_;
};

}  // namespace strata
