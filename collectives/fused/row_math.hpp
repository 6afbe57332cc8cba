// The per-row arithmetic of the fused AllReduce-RMSNorm, written once for
// the CUDA and HIP kernels, the host shared-memory path and the host
// fallback (a "platform" P supplies the thread numbering and the block-wide
// sum; protocol.hpp lists what it must provide).
//
// Elements are float, or bfloat16 / float16 held as their bits; every value
// is widened to float, combined in float, and rounded back to nearest even
// once (portability/numeric/float16.hpp, the conversions the host
// collectives use too).
#pragma once

#include "portability/numeric/float16.hpp"
#include "portability/setup/host_device.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace strata::fused::math {

struct Bf16 {
  uint16_t bits;
};
struct F16 {
  uint16_t bits;
};

STRATA_HOST_DEVICE STRATA_INLINE float to_float(float v) { return v; }
STRATA_HOST_DEVICE STRATA_INLINE float to_float(Bf16 v) { return numeric::bfloat16_to_float(v.bits); }
STRATA_HOST_DEVICE STRATA_INLINE float to_float(F16 v) { return numeric::half_to_float(v.bits); }

template <class T>
struct Round;
template <>
struct Round<float> {
  STRATA_HOST_DEVICE STRATA_INLINE static float from(float v) { return v; }
};
// On CUDA devices one conversion instruction (cvt.rn: round to nearest even,
// overflow to infinity, subnormal results kept; the same bits as the
// integer routines for every finite float and infinity, and a NaN for a NaN,
// though not the same NaN). The integer routines take about seven
// instructions an element, which a one-row call of 1024 threads pays twice
// an element on one multiprocessor.
template <>
struct Round<Bf16> {
  STRATA_HOST_DEVICE STRATA_INLINE static Bf16 from(float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned short b;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(v));
    return Bf16{b};
#else
    return Bf16{numeric::float_to_bfloat16(v)};
#endif
  }
};
template <>
struct Round<F16> {
  STRATA_HOST_DEVICE STRATA_INLINE static F16 from(float v) {
#if defined(__CUDA_ARCH__)
    unsigned short b;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(v));
    return F16{b};
#else
    return F16{numeric::float_to_half(v)};
#endif
  }
};

// Negative zero (only the sign bit set) marks an element of a Lamport slot
// that is not posted yet (protocol.hpp); canonical() sends -0 as +0.
STRATA_HOST_DEVICE STRATA_INLINE uint32_t bits_of(float v) {
  uint32_t b;
  __builtin_memcpy(&b, &v, sizeof b);
  return b;
}
STRATA_HOST_DEVICE STRATA_INLINE uint32_t bits_of(Bf16 v) { return v.bits; }
STRATA_HOST_DEVICE STRATA_INLINE uint32_t bits_of(F16 v) { return v.bits; }
// The bits of an empty element of `element` bytes (2 or 4): the sign bit alone.
constexpr uint32_t empty_bits(size_t element) { return element == 4 ? 0x80000000u : 0x8000u; }
template <class T>
STRATA_HOST_DEVICE STRATA_INLINE bool is_empty(T v) {
  return bits_of(v) == empty_bits(sizeof(T));
}
template <class T>
STRATA_HOST_DEVICE STRATA_INLINE T empty_value() {
  T v;
  const uint32_t b = empty_bits(sizeof(T));
  __builtin_memcpy(&v, &b, sizeof v);  // little-endian: the low bytes
  return v;
}
template <class T>
STRATA_HOST_DEVICE STRATA_INLINE T canonical(T v) {
  if (!is_empty(v)) return v;
  T zero;
  __builtin_memset(&zero, 0, sizeof zero);
  return zero;
}

// V consecutive elements, moved as one access when V * sizeof(T) is 16 and
// the address is 16-byte aligned (the caller checks; V = 1 otherwise).
template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T e[V];
};

// A vector's elements of 2 bytes two to a 32-bit word (SWAR): a lane of
// `lanes_empty` has its top bit set where that element is the empty value
// 0x8000. Exact: the low 15 bits of each lane are added to 0x7fff apart, so
// no carry crosses a lane. Four integer operations a word instead of two
// extractions and a compare an element.
STRATA_HOST_DEVICE STRATA_INLINE uint32_t lanes_empty(uint32_t w) {
  const uint32_t x = w ^ 0x80008000u;  // an empty lane becomes 0
  return ~(((x & 0x7fff7fffu) + 0x7fff7fffu) | x) & 0x80008000u;
}

// Whether any element of v reads as empty.
template <class T, int V>
STRATA_HOST_DEVICE STRATA_INLINE bool any_empty(const Vec<T, V>& v) {
  if constexpr (sizeof(T) == 2 && V % 2 == 0) {
    uint32_t w[V / 2];
    __builtin_memcpy(w, &v, sizeof w);
    uint32_t hit = 0;
    for (int k = 0; k < V / 2; ++k) hit |= lanes_empty(w[k]);
    return hit != 0;
  } else {
    bool hit = false;
    for (int k = 0; k < V; ++k) hit = hit || is_empty(v.e[k]);
    return hit;
  }
}

// v with every empty element sent as +0 (canonical(), a vector at a time).
template <class T, int V>
STRATA_HOST_DEVICE STRATA_INLINE Vec<T, V> canonical_vector(Vec<T, V> v) {
  if constexpr (sizeof(T) == 2 && V % 2 == 0) {
    uint32_t w[V / 2];
    __builtin_memcpy(w, &v, sizeof w);
    for (int k = 0; k < V / 2; ++k) w[k] &= ~((lanes_empty(w[k]) >> 15) * 0xffffu);
    __builtin_memcpy(&v, w, sizeof w);
  } else {
    for (int k = 0; k < V; ++k) v.e[k] = canonical(v.e[k]);
  }
  return v;
}

template <class T, int V>
STRATA_HOST_DEVICE STRATA_INLINE Vec<T, V> load(const T* p) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return *reinterpret_cast<const Vec<T, V>*>(p);
#else
  Vec<T, V> v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
#endif
}

// A load of memory another rank wrote during this kernel (a peer's staged
// rows or results): on CUDA it bypasses L1 (ld.global.cg), which is not
// coherent with writes made elsewhere while a kernel runs.
template <class T, int V>
STRATA_HOST_DEVICE STRATA_INLINE Vec<T, V> load_shared(const T* p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Vec<T, V>) == 16) {
    const uint4 u = __ldcg(reinterpret_cast<const uint4*>(p));
    Vec<T, V> v;
    __builtin_memcpy(&v, &u, sizeof v);
    return v;
  } else if constexpr (sizeof(Vec<T, V>) == 4) {
    const unsigned u = __ldcg(reinterpret_cast<const unsigned*>(p));
    Vec<T, V> v;
    __builtin_memcpy(&v, &u, sizeof v);
    return v;
  } else {
    const unsigned short u = __ldcg(reinterpret_cast<const unsigned short*>(p));
    Vec<T, V> v;
    __builtin_memcpy(&v, &u, sizeof v);
    return v;
  }
#else
  return load<T, V>(p);
#endif
}

template <class T, int V>
STRATA_HOST_DEVICE STRATA_INLINE void store(T* p, const Vec<T, V>& v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  *reinterpret_cast<Vec<T, V>*>(p) = v;
#else
  __builtin_memcpy(p, &v, sizeof v);
#endif
}

// dst = T(src[0] + ... + src[n-1] (+ add)), summed in that order in float,
// over this thread's share of the row (elements p.thread() * V, stepping by
// p.threads() * V). Returns the sum of squares of the rounded values this
// thread wrote, in the platform's accumulator (device: float, each thread
// holding a few elements before the block's tree; host: double, one thread
// summing the whole row). `add` may be null; dst may be add or one of the sources
// (each element is read before it is written, by the same thread).
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE STRATA_INLINE typename P::Accumulator sum_row(const P& p, const T* const* src, int n, const T* add,
                                                                 T* dst, int64_t hidden) {
  typename P::Accumulator squares = 0;
  for (int64_t i = static_cast<int64_t>(p.thread()) * V; i < hidden; i += static_cast<int64_t>(p.threads()) * V) {
    float acc[V];
    const Vec<T, V> first = load_shared<T, V>(src[0] + i);
    for (int k = 0; k < V; ++k) acc[k] = to_float(first.e[k]);
    for (int s = 1; s < n; ++s) {
      const Vec<T, V> more = load_shared<T, V>(src[s] + i);
      for (int k = 0; k < V; ++k) acc[k] += to_float(more.e[k]);
    }
    if (add != nullptr) {
      const Vec<T, V> a = load<T, V>(add + i);
      for (int k = 0; k < V; ++k) acc[k] += to_float(a.e[k]);
    }
    Vec<T, V> out;
    for (int k = 0; k < V; ++k) {
      out.e[k] = Round<T>::from(acc[k]);
      const typename P::Accumulator r = to_float(out.e[k]);
      squares += r * r;
    }
    store<T, V>(dst + i, out);
  }
  return squares;
}

// The RMSNorm scale of a row whose squares sum to `squares`.
template <class A>
STRATA_HOST_DEVICE STRATA_INLINE float rms_scale(A squares, int64_t hidden, float epsilon) {
  return 1.0f / sqrtf(static_cast<float>(squares / static_cast<A>(hidden)) + epsilon);
}

// out = T(v * scale * weight) over this thread's share of the row (the
// same elements sum_row gave it, so v may be what this thread just wrote).
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE STRATA_INLINE void scale_row(const P& p, const T* v, const T* weight, T* out, float scale,
                                                int64_t hidden) {
  for (int64_t i = static_cast<int64_t>(p.thread()) * V; i < hidden; i += static_cast<int64_t>(p.threads()) * V) {
    const Vec<T, V> x = load<T, V>(v + i);
    const Vec<T, V> w = load<T, V>(weight + i);
    Vec<T, V> y;
    for (int k = 0; k < V; ++k) y.e[k] = Round<T>::from(to_float(x.e[k]) * scale * to_float(w.e[k]));
    store<T, V>(out + i, y);
  }
}

// One whole row: residual = T(sum of sources (+ add)); out = rmsnorm(residual) * weight.
// `smem`: the platform's block-sum scratch.
STRATA_HD_TEMPLATE
template <int V, class P, class T>
STRATA_HOST_DEVICE STRATA_INLINE void norm_row(P& p, const T* const* src, int n, const T* add, T* residual,
                                               const T* weight, T* out, int64_t hidden, float epsilon, float* smem) {
  const auto squares = p.block_sum(sum_row<V>(p, src, n, add, residual, hidden), smem);
  scale_row<V>(p, residual, weight, out, rms_scale(squares, hidden, epsilon), hidden);
}

}  // namespace strata::fused::math
