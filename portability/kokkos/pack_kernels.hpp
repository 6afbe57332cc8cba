// The Kokkos pack/unpack kernels of a canonical strided block, one body for
// both directions and every backend:
//  - WordCopy, the device kernel: one work item per word of 1, 2, 4, 8 or
//    16 bytes (the largest dividing the block length, every block start and
//    the packed pointer, as the native kernels choose it). Work item t moves
//    words t, t + L, t + 2L, t + 3L (L = lanes; 2 items of 16-byte words),
//    loading all before storing any, so consecutive items of a warp read
//    and write consecutive words and each thread keeps several loads in
//    flight (the native kernels' scheme, pack_kernels.cu). The packed word
//    of item i is word i; its source is found through the shared index math
//    (portability/layout/strided_index.hpp): 32-bit multiply-high divisions
//    prepared on the host when the word count fits, 64-bit otherwise.
//  - HostChunks, for execution spaces that run on the host: Strata's host
//    pack engine (pack_host, with its per-block-size loops) over byte ranges
//    of the packed stream, one range per work item.
#pragma once

#include <strata/layout.hpp>

#include "portability/layout/strided_index.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>

namespace strata::kokkos::detail {

enum class Dir { pack, unpack };

// A 16-byte word (the widest the native kernels move).
struct alignas(16) Word16 {
  uint64_t lo;
  uint64_t hi;
};

// The arguments of one launch, by value: the (sub-)block as a fixed-size
// StridedIndex and the divisors of its dimension counts and word count.
struct WordArgs {
  strata::detail::StridedIndex index;
  strata::detail::FastDivisor count_div[strata::detail::StridedIndex::kMaxDims];
  strata::detail::FastDivisor word_div;
  char* user = nullptr;
  char* packed = nullptr;
  int64_t items = 0;  // blocks * words
  int64_t words = 0;  // words per block
  int64_t lanes = 0;  // work items of the launch
};

template <class W>
KOKKOS_INLINE_FUNCTION constexpr int unroll_of() {
  return sizeof(W) >= 16 ? 2 : 4;
}

// Narrow: items < 2^32 (the 32-bit index path).
template <Dir D, class W, bool Narrow>
struct WordCopy {
  WordArgs a;

  KOKKOS_INLINE_FUNCTION void operator()(const int64_t t) const {
    constexpr int kU = unroll_of<W>();
    constexpr int kMaxDims = strata::detail::StridedIndex::kMaxDims;
    W v[kU];
    W* to[kU];
    for (int u = 0; u < kU; ++u) {
      to[u] = nullptr;
      const int64_t item = t + u * a.lanes;
      if (item >= a.items) continue;
      int64_t offset = 0;
      int64_t j = 0;
      if (Narrow) {
        const uint32_t i32 = static_cast<uint32_t>(item);
        const uint32_t blk = strata::detail::fast_divide(i32, a.word_div);
        j = static_cast<int64_t>(i32 - blk * static_cast<uint32_t>(a.words));
        offset =
            strata::detail::block_offset32<kMaxDims>(a.index.offset, a.index.dims, a.count_div, a.index.ndims, blk);
      } else {
        const int64_t blk = item / a.words;
        j = item - blk * a.words;
        offset = strata::detail::block_offset(a.index.offset, a.index.dims, a.index.ndims, blk);
      }
      W* user = reinterpret_cast<W*>(a.user + offset) + j;
      W* packed = reinterpret_cast<W*>(a.packed) + item;
      if (D == Dir::pack) {
        v[u] = *user;
        to[u] = packed;
      } else {
        v[u] = *packed;
        to[u] = user;
      }
    }
    for (int u = 0; u < kU; ++u) {
      if (to[u] != nullptr) *to[u] = v[u];
    }
  }
};

// Byte ranges [c * chunk, min((c + 1) * chunk, total)) of the packed stream
// through the host engine. The block is shared so that the functor stays
// cheap to copy and valid however the space runs it.
template <Dir D>
struct HostChunks {
  std::shared_ptr<const StridedBlock> layout;
  char* user = nullptr;
  char* packed = nullptr;
  int64_t chunk = 0;
  int64_t total = 0;

  void operator()(const int64_t c) const {
    const int64_t first = c * chunk;
    const int64_t last = first + chunk < total ? first + chunk : total;
    if (D == Dir::pack) {
      pack_host(*layout, user, packed + first, first, last);
    } else {
      unpack_host(*layout, packed + first, user, first, last);
    }
  }
};

}  // namespace strata::kokkos::detail
