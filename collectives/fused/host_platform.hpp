// The host platform of protocol.hpp: a "block" is one thread; flags are
// C++ atomics on memory every rank maps (an MPI shared-memory window), or,
// in the tests, on memory the threads of one process share. Spins yield the
// core after a short while: the ranks of a host run may share cores.
#pragma once

#include "collectives/fused/row_math.hpp"

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <type_traits>

namespace strata::fused {

class HostPlatform {
 public:
  using Accumulator = double;  // one thread sums a whole row: double keeps it exact enough for fp32
  int thread() const { return 0; }
  int threads() const { return 1; }
  void sync() const {}
  bool sync_and(bool v) const { return v; }
  double block_sum(double v, float* /*smem*/) const { return v; }

  void store_release(uint32_t* p, uint32_t v) const { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
  uint32_t load_acquire(const uint32_t* p) const { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
  uint32_t load_relaxed(const uint32_t* p) const { return __atomic_load_n(p, __ATOMIC_RELAXED); }
  void store_relaxed(uint32_t* p, uint32_t v) const { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
  uint32_t fetch_add(uint32_t* p, uint32_t v) const { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
  void report(uint64_t* claim, uint64_t* host_word, uint64_t w) const {
    uint64_t expected = 0;
    if (__atomic_compare_exchange_n(claim, &expected, w, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      __atomic_store_n(host_word, w, __ATOMIC_RELEASE);
    }
  }
  void fence_system() const { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

  // A Lamport slot's elements: one atomic access per element (release on
  // post, acquire on poll), so the reader's plain reads of a posted row
  // come after the peer's writes.
  template <class T, int V>
  math::Vec<T, V> load_posted(const T* p) const {
    math::Vec<T, V> v;
    for (int k = 0; k < V; ++k) {
      using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>;
      const Bits b = __atomic_load_n(reinterpret_cast<const Bits*>(p + k), __ATOMIC_ACQUIRE);
      __builtin_memcpy(&v.e[k], &b, sizeof b);
    }
    return v;
  }
  template <class T, int V>
  void store_posted(T* p, const math::Vec<T, V>& v) const {
    for (int k = 0; k < V; ++k) {
      using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>;
      Bits b;
      __builtin_memcpy(&b, &v.e[k], sizeof b);
      __atomic_store_n(reinterpret_cast<Bits*>(p + k), b, __ATOMIC_RELEASE);
    }
  }
  uint64_t now() const {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }
  void pause() {
    if (++polls_ > 64) sched_yield();
  }

 private:
  unsigned polls_ = 0;
};

}  // namespace strata::fused
