// The device platform of protocol.hpp for CUDA (nvcc, sm_70 and later) and
// HIP (hipcc): thread numbering, the block-wide sum, and the system-scope
// release/acquire flags the peers exchange. Included by kernels.cu only.
#pragma once

#include "collectives/fused/row_math.hpp"
#include "portability/gpu/runtime_names.hpp"

#include <cstdint>

#if !defined(__HIPCC__)
#include <cooperative_groups.h>
#endif

namespace strata::fused {

struct DevicePlatform {
  using Accumulator = float;  // a few elements per thread, then a tree over the block
  __device__ int thread() const { return static_cast<int>(threadIdx.x); }
  __device__ int threads() const { return static_cast<int>(blockDim.x); }
  __device__ void sync() const { __syncthreads(); }
  __device__ bool sync_and(bool v) const { return __syncthreads_and(v ? 1 : 0) != 0; }

  // Butterfly within a warp: every lane ends with the same value (the
  // additions pair the same operands, and IEEE addition commutes).
  __device__ static float warp_sum(float v) {
    for (int m = warpSize / 2; m > 0; m /= 2) {
#if defined(__HIPCC__)
      v += __shfl_xor(v, m);
#else
      v += __shfl_xor_sync(0xffffffffu, v, m);
#endif
    }
    return v;
  }

  // The warps' butterflies, then one more over the warps' sums (a lane per
  // warp, zeros past the last): every thread of the block, and every rank
  // running the same row, gets the same bits. Adding the warps' sums one by
  // one instead cost each thread a load and an addition per warp, 64
  // instructions at 1024 threads, which a one-row call pays on one
  // multiprocessor (docs/fused.md, "Small calls").
  __device__ float block_sum(float v, float* smem) const {
    v = warp_sum(v);
    const int lane = static_cast<int>(threadIdx.x) % warpSize;
    const int warp = static_cast<int>(threadIdx.x) / warpSize;
    __syncthreads();  // the previous row's readers are done with smem
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
    return warp_sum(lane < warps ? smem[lane] : 0.0f);
  }

  __device__ void store_release(uint32_t* p, uint32_t v) const {
#if defined(__HIPCC__)
    __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
#else
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#endif
  }
  __device__ uint32_t load_acquire(const uint32_t* p) const {
#if defined(__HIPCC__)
    return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
#else
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
#endif
  }
  __device__ uint32_t load_relaxed(const uint32_t* p) const { return *static_cast<const volatile uint32_t*>(p); }
  __device__ void store_relaxed(uint32_t* p, uint32_t v) const { *static_cast<volatile uint32_t*>(p) = v; }
  __device__ uint32_t fetch_add(uint32_t* p, uint32_t v) const { return atomicAdd(p, v); }
  // The claim word is device memory (device-scope CAS); the winner then
  // publishes to the host-visible word with one 8-byte store.
  __device__ void report(uint64_t* claim, uint64_t* host_word, uint64_t w) const {
    auto* c = reinterpret_cast<unsigned long long*>(claim);
    if (atomicCAS(c, 0ull, static_cast<unsigned long long>(w)) == 0ull) {
      *static_cast<volatile uint64_t*>(host_word) = w;
      __threadfence_system();
    }
  }
  __device__ void fence_system() const { __threadfence_system(); }

  // A Lamport slot's elements, which a peer may be writing while this runs:
  // volatile loads (never from L1, never hoisted out of the poll), element
  // or 16-byte granularity; an element is never torn (its own store).
  template <class T, int V>
  __device__ math::Vec<T, V> load_posted(const T* p) const {
#if !defined(__HIPCC__)
    if constexpr (sizeof(math::Vec<T, V>) == 16) {
      math::Vec<T, V> v;
      uint32_t w[4];
      asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                   : "l"(p));
      __builtin_memcpy(&v, w, sizeof v);
      return v;
    } else {
      return load_elements<T, V>(p);
    }
#else
    return load_elements<T, V>(p);
#endif
  }
  template <class T, int V>
  __device__ math::Vec<T, V> load_elements(const T* p) const {
    math::Vec<T, V> v;
    for (int k = 0; k < V; ++k) {
      if constexpr (sizeof(T) == 4) {
        const uint32_t b = *reinterpret_cast<const volatile uint32_t*>(p + k);
        __builtin_memcpy(&v.e[k], &b, sizeof b);
      } else {
        const uint16_t b = *reinterpret_cast<const volatile uint16_t*>(p + k);
        __builtin_memcpy(&v.e[k], &b, sizeof b);
      }
    }
    return v;
  }
  template <class T, int V>
  __device__ void store_posted(T* p, const math::Vec<T, V>& v) const {
    math::store<T, V>(p, v);
  }
  __device__ uint64_t now() const {
#if defined(__HIP_DEVICE_COMPILE__)
    return static_cast<uint64_t>(wall_clock64());
#elif defined(__HIPCC__)
    return 0;  // the host pass of hipcc (never called there)
#else
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#endif
  }
  __device__ void pause() const {
#if defined(__HIP_DEVICE_COMPILE__)
    __builtin_amdgcn_s_sleep(1);
#elif defined(__HIPCC__)
#else
    __nanosleep(64);
#endif
  }
};

#if !defined(__HIPCC__)
// A thread block cluster (CUDA, compute capability 9.0 and later) as one
// block of protocol.hpp: its threads are numbered across the cluster's
// blocks, so a row is shared among several multiprocessors; the barriers
// and the sum span the cluster (the blocks' sums are read through
// distributed shared memory, in block order: every block, and every rank
// with the same cluster size, gets the same bits). Each cluster-wide step
// writes one of two slots by parity and reads them after a cluster barrier;
// a slot is written again only two steps later, after a barrier every
// reader of the old value has passed. Compiled for sm_90 and later only
// (kernels.cu launches it only there).
struct ClusterPlatform : DevicePlatform {
  struct Shared {
    float sum[2];
    int all[2];
  };
  Shared* shared;  // this block's; the others' through distributed shared memory
  int rank = 0;    // this block within its cluster
  int size = 1;    // blocks in the cluster
  int parity = 0;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __device__ explicit ClusterPlatform(Shared* s) : shared(s) {
    rank = static_cast<int>(cooperative_groups::this_cluster().block_rank());
    size = static_cast<int>(cooperative_groups::this_cluster().num_blocks());
  }
  __device__ int thread() const { return rank * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x); }
  __device__ int threads() const { return size * static_cast<int>(blockDim.x); }
  __device__ void sync() const { cooperative_groups::this_cluster().sync(); }
  __device__ bool sync_and(bool v) {
    const int mine = __syncthreads_and(v ? 1 : 0);
    if (threadIdx.x == 0) shared->all[parity] = mine;
    cooperative_groups::this_cluster().sync();
    bool all = true;
    for (int b = 0; b < size; ++b) {
      all = all && *cooperative_groups::this_cluster().map_shared_rank(&shared->all[parity], b) != 0;
    }
    parity ^= 1;
    return all;
  }
  __device__ float block_sum(float v, float* smem) {
    const float mine = DevicePlatform::block_sum(v, smem);
    if (threadIdx.x == 0) shared->sum[parity] = mine;
    cooperative_groups::this_cluster().sync();
    float total = 0.0f;
    for (int b = 0; b < size; ++b)
      total += *cooperative_groups::this_cluster().map_shared_rank(&shared->sum[parity], b);
    parity ^= 1;
    return total;
  }
#endif
};
#endif

}  // namespace strata::fused
