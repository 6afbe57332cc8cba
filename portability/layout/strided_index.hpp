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
