// Host pack/unpack of a canonical strided block.
//
// Small blocks are bound by one cache line per block, so the inner loop must
// cost a few instructions per block: rows of equal-size blocks are copied by
// a loop specialised for the block size (a fixed-size memcpy compiles to one
// or two moves), with a software prefetch a few blocks ahead when the stride
// leaves the cache line. Larger blocks use memcpy.
#include <strata/layout.hpp>

#include "portability/layout/strided_index.hpp"

#include <algorithm>
#include <cstring>

namespace strata {
namespace {

enum class Dir { pack, unpack };

template <Dir D>
STRATA_INLINE void copy_bytes(char* user, char* packed, size_t n) {
  if (D == Dir::pack) {
    std::memcpy(packed, user, n);
  } else {
    std::memcpy(user, packed, n);
  }
}

// Blocks ahead to prefetch when consecutive blocks are in different lines.
constexpr int64_t kPrefetchAhead = 12;

using RowFn = void (*)(char* user, char* packed, int64_t n, int64_t stride, int64_t block);

// A row of n blocks of B bytes whose user addresses are `stride` apart.
template <Dir D, int B>
void row_fixed(char* user, char* packed, int64_t n, int64_t stride, int64_t /*block*/) {
  if (stride >= 64 || stride <= -64) {
    const int64_t ahead = kPrefetchAhead * stride;
    int64_t i = 0;
    for (; i + kPrefetchAhead < n; ++i) {
      __builtin_prefetch(user + ahead, D == Dir::unpack ? 1 : 0, 0);
      copy_bytes<D>(user, packed, B);
      user += stride;
      packed += B;
    }
    for (; i < n; ++i) {
      copy_bytes<D>(user, packed, B);
      user += stride;
      packed += B;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      copy_bytes<D>(user, packed, B);
      user += stride;
      packed += B;
    }
  }
}

template <Dir D>
void row_any(char* user, char* packed, int64_t n, int64_t stride, int64_t block) {
  for (int64_t i = 0; i < n; ++i) {
    copy_bytes<D>(user, packed, static_cast<size_t>(block));
    user += stride;
    packed += block;
  }
}

template <Dir D>
RowFn select_row(int64_t block) {
  switch (block) {
    case 1: return row_fixed<D, 1>;
    case 2: return row_fixed<D, 2>;
    case 3: return row_fixed<D, 3>;
    case 4: return row_fixed<D, 4>;
    case 6: return row_fixed<D, 6>;
    case 8: return row_fixed<D, 8>;
    case 12: return row_fixed<D, 12>;
    case 16: return row_fixed<D, 16>;
    case 24: return row_fixed<D, 24>;
    case 32: return row_fixed<D, 32>;
    case 48: return row_fixed<D, 48>;
    case 64: return row_fixed<D, 64>;
    case 128: return row_fixed<D, 128>;
    default: return row_any<D>;
  }
}

// Whole blocks [kb, ke), packed bytes written from `packed` on.
template <Dir D>
void copy_blocks(const StridedBlock& layout, char* base, char* packed, int64_t kb, int64_t ke) {
  const Stream* dims = layout.dims.data();
  const int nd = static_cast<int>(layout.dims.size());
  const int64_t block = layout.block;
  constexpr int kMaxOdometer = 64;
  if (nd > kMaxOdometer) {  // absurdly deep: locate every block from scratch
    for (int64_t k = kb; k < ke; ++k, packed += block) {
      copy_bytes<D>(base + detail::block_offset(layout.offset, dims, nd, k), packed, static_cast<size_t>(block));
    }
    return;
  }
  int64_t idx[kMaxOdometer];
  detail::block_position(dims, nd, kb, idx);
  int64_t off = detail::block_offset(layout.offset, dims, nd, kb);
  const RowFn row = select_row<D>(block);
  const int64_t c0 = dims[0].count;
  const int64_t s0 = dims[0].stride;
  int64_t remaining = ke - kb;
  while (remaining > 0) {
    const int64_t n = std::min(c0 - idx[0], remaining);
    row(base + off, packed, n, s0, block);
    packed += n * block;
    remaining -= n;
    idx[0] += n;
    off += n * s0;
    // Carry the odometer into the outer dimensions.
    for (int d = 0; d < nd && idx[d] == dims[d].count; ++d) {
      idx[d] = 0;
      off -= dims[d].count * dims[d].stride;
      if (d + 1 < nd) {
        ++idx[d + 1];
        off += dims[d + 1].stride;
      }
    }
  }
}

template <Dir D>
void copy_range(const StridedBlock& layout, char* base, char* packed, int64_t first, int64_t last) {
  if (last < 0) last = layout.packed_bytes();
  if (first >= last || layout.block <= 0) return;
  const int64_t block = layout.block;
  if (layout.dims.empty()) {
    copy_bytes<D>(base + layout.offset + first, packed, static_cast<size_t>(last - first));
    return;
  }
  const Stream* dims = layout.dims.data();
  const int nd = static_cast<int>(layout.dims.size());
  auto partial = [&](int64_t k, int64_t from, int64_t to) {
    copy_bytes<D>(base + detail::block_offset(layout.offset, dims, nd, k) + from, packed,
                  static_cast<size_t>(to - from));
    packed += to - from;
  };
  int64_t b0 = first / block;
  const int64_t o0 = first % block;
  const int64_t b1 = last / block;
  const int64_t o1 = last % block;
  if (b0 == b1) {
    partial(b0, o0, o1);
    return;
  }
  if (o0 != 0) {
    partial(b0, o0, block);
    ++b0;
  }
  if (b0 < b1) {
    copy_blocks<D>(layout, base, packed, b0, b1);
    packed += (b1 - b0) * block;
  }
  if (o1 != 0) partial(b1, 0, o1);
}

}  // namespace

void pack_host(const StridedBlock& layout, const void* base, void* packed, int64_t first, int64_t last) noexcept {
  copy_range<Dir::pack>(layout, const_cast<char*>(static_cast<const char*>(base)), static_cast<char*>(packed), first,
                        last);
}

void unpack_host(const StridedBlock& layout, const void* packed, void* base, int64_t first, int64_t last) noexcept {
  copy_range<Dir::unpack>(layout, static_cast<char*>(base), const_cast<char*>(static_cast<const char*>(packed)),
                          first, last);
}

}  // namespace strata
