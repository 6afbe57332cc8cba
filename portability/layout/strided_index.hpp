// Index math of the canonical strided block, written once for every backend:
// host loops, CUDA and HIP kernels and Kokkos functors all map a block number
// to its byte offset through block_offset().
#pragma once

#include <strata/layout.hpp>

#include "portability/setup/host_device.hpp"

#include <cstdint>

namespace strata::detail {

// Byte offset of block `b` (0-based, in traversal order) of a strided block
// given as an offset and its outer dimensions, innermost first.
STRATA_HOST_DEVICE STRATA_INLINE int64_t block_offset(int64_t offset, const Stream* dims, int ndims, int64_t b) {
  for (int d = 0; d < ndims; ++d) {
    const int64_t q = b / dims[d].count;
    offset += (b - q * dims[d].count) * dims[d].stride;
    b = q;
  }
  return offset;
}

// Mixed-radix position of block `b`, for loops that then step forward.
STRATA_HOST_DEVICE STRATA_INLINE void block_position(const Stream* dims, int ndims, int64_t b, int64_t* index) {
  for (int d = 0; d < ndims; ++d) {
    const int64_t q = b / dims[d].count;
    index[d] = b - q * dims[d].count;
    b = q;
  }
}

// Division of 32-bit numbers by a divisor fixed in advance, as a
// multiply-high, an add and a shift (Granlund and Montgomery, PLDI 1994: the
// round-up method with an implicit 33-bit multiplier 2^32 + magic, exact for
// every n < 2^32). GPUs have no integer divide instruction: a 32-bit
// division is about 20 instructions, this is 3.
struct FastDivisor {
  uint32_t magic = 1;
  uint32_t shift = 0;
};

inline FastDivisor make_fast_divisor(uint32_t d) {
  uint32_t l = 0;
  while ((uint64_t{1} << l) < d) ++l;
  const uint64_t m = ((uint64_t{1} << 32) * ((uint64_t{1} << l) - d)) / d + 1;
  return FastDivisor{static_cast<uint32_t>(m), l};
}

STRATA_HOST_DEVICE STRATA_INLINE uint32_t fast_divide(uint32_t n, FastDivisor f) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  const uint64_t t = __umulhi(n, f.magic);
#else
  const uint64_t t = (static_cast<uint64_t>(n) * f.magic) >> 32;
#endif
  return static_cast<uint32_t>((t + n) >> f.shift);
}

// block_offset for block numbers below 2^32, with the counts of dims[0 ..
// ndims-2] prepared as divisors (the outermost needs no division: b is
// below its count). MaxDims bounds the unrolled loop.
template <int MaxDims>
STRATA_HOST_DEVICE STRATA_INLINE int64_t block_offset32(int64_t offset, const Stream* dims, const FastDivisor* divisors,
                                                        int ndims, uint32_t b) {
  const int last = ndims - 1;
#if defined(__CUDACC__) || defined(__HIPCC__)
#pragma unroll
#endif
  for (int d = 0; d < MaxDims; ++d) {
    if (d >= last) {
      if (d == last) offset += static_cast<int64_t>(b) * dims[d].stride;
      break;
    }
    const uint32_t q = fast_divide(b, divisors[d]);
    offset += static_cast<int64_t>(b - q * static_cast<uint32_t>(dims[d].count)) * dims[d].stride;
    b = q;
  }
  return offset;
}

// A fixed-size copy of a strided block for kernel arguments. Blocks with more
// outer dimensions than kMaxDims are split by the launcher: the outermost
// dimensions are looped over on the host, one launch per sub-block.
struct StridedIndex {
  static constexpr int kMaxDims = 12;
  int64_t offset = 0;
  int64_t block = 0;
  int ndims = 0;
  Stream dims[kMaxDims];
};

}  // namespace strata::detail
