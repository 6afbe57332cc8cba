#include "interposer/types/fast_types.hpp"

#include "interposer/types/type_cache.hpp"

#include <atomic>
#include <cstring>
#include <mutex>

namespace strata::interposer {
namespace {

// Open addressing, linear probing over a power-of-two table; a handle is
// its bits (a pointer in Open MPI, an int in MPICH). Entries are never
// moved: a freed one keeps its key with the shape unknown, so probes stay
// valid; a full table stops remembering (answers unknown: the slow path).
constexpr size_t kSlots = 8192;
constexpr int kProbes = 16;

struct Slot {
  std::atomic<uint64_t> key{0};  // handle bits + 1; 0: empty
  std::atomic<uint8_t> shape{0};
};

Slot g_slots[kSlots];
std::mutex g_write;

uint64_t key_of(MPI_Datatype type) {
  uint64_t bits = 0;
  static_assert(sizeof(MPI_Datatype) <= sizeof(bits), "handle wider than 64 bits");
  std::memcpy(&bits, &type, sizeof type);
  return bits + 1;
}

size_t home_of(uint64_t key) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 51) & (kSlots - 1); }

}  // namespace

TypeShape fast_shape(MPI_Datatype type) noexcept {
  const uint64_t key = key_of(type);
  size_t i = home_of(key);
  for (int p = 0; p < kProbes; ++p, i = (i + 1) & (kSlots - 1)) {
    const uint64_t k = g_slots[i].key.load(std::memory_order_acquire);
    if (k == key) return static_cast<TypeShape>(g_slots[i].shape.load(std::memory_order_acquire));
    if (k == 0) return TypeShape::unknown;
  }
  return TypeShape::unknown;
}

TypeShape shape_of(MPI_Datatype type) noexcept {
  const TypeShape s = fast_shape(type);
  if (s != TypeShape::unknown || type == MPI_DATATYPE_NULL) return s;
  (void)type_cache().find_usable(type);  // describes and remembers it (type_cache.cpp)
  return fast_shape(type);
}

void remember_shape(MPI_Datatype type, TypeShape shape) noexcept {
  const uint64_t key = key_of(type);
  std::lock_guard<std::mutex> lock(g_write);
  size_t i = home_of(key);
  for (int p = 0; p < kProbes; ++p, i = (i + 1) & (kSlots - 1)) {
    const uint64_t k = g_slots[i].key.load(std::memory_order_relaxed);
    if (k == key || k == 0) {
      g_slots[i].shape.store(static_cast<uint8_t>(shape), std::memory_order_release);
      g_slots[i].key.store(key, std::memory_order_release);
      return;
    }
  }
}

void forget_shape(MPI_Datatype type) noexcept {
  const uint64_t key = key_of(type);
  std::lock_guard<std::mutex> lock(g_write);
  size_t i = home_of(key);
  for (int p = 0; p < kProbes; ++p, i = (i + 1) & (kSlots - 1)) {
    const uint64_t k = g_slots[i].key.load(std::memory_order_relaxed);
    if (k == key) {
      g_slots[i].shape.store(static_cast<uint8_t>(TypeShape::unknown), std::memory_order_release);
      return;
    }
    if (k == 0) return;
  }
}

}  // namespace strata::interposer
