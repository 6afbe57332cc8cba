// Host pack/unpack of a canonical strided block.
//
// Small blocks are bound by one cache-line miss per block: the core keeps
// only so many misses in flight, so the loop must cost a few instructions per
// block and nothing else. Measured with bench/pack (docs/bench-pack.md) on a
// 2-core Xeon under KVM against Open MPI 4.1.4, and kept:
//  - rows of equal-size blocks are copied by a loop specialised for the block
//    size (a fixed-size memcpy compiles to one or a few moves), unrolled by 4;
//  - pack uses no software prefetch: the hardware keeps the line-fill buffers
//    busy on a constant stride by itself. The former non-temporal prefetch
//    (prefetchnta 12 blocks ahead) made packs up to 2x slower wherever the
//    source would have stayed in L2/L3, and T0/T1/T2 hints at distances 4-256
//    gained under 5% anywhere;
//  - unpack prefetches for writing 8 blocks ahead: stores commit in order, so
//    the hardware keeps fewer store misses in flight than load misses;
//  - the two innermost dimensions run in one loop nest, so short rows (a
//    subarray of a few elements per row) pay no call and no odometer carry
//    per row (rows of 2 blocks: 2.4 -> 0.8 ns per block in cache);
//  - packs of at least kStreamFromBytes of whole blocks that are a multiple
//    of 16 and at least 64 bytes long use streaming stores: such an output
//    would not stay in L2 anyway, and the stores then skip the
//    read-for-ownership of every output line (1.2-1.7x for 64-512 B blocks
//    at 4-16 MiB; slower below 1 MiB, where the output stays in cache);
//  - blocks of 128 B or more that are a multiple of 32 use 32-byte AVX2
//    moves when the CPU has AVX2 (chosen at run time: the build targets plain
//    x86-64, where a fixed-size memcpy expands to 16-byte moves). In cache,
//    16 KiB of 256 B blocks went from 0.91-0.94x the library to 1.6-1.7x and
//    512 B blocks at 64-256 KiB from 1.00x to 1.17x; 64 B blocks stay on
//    the unrolled 16-byte loop, which was as fast or faster;
//  - other long or odd blocks go through the C library's memcpy (GCC expands
//    a fixed 512 B copy into a slow `rep movsq`).
#include <strata/layout.hpp>

#include "portability/layout/strided_index.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#define STRATA_PACK_STREAM 1
#else
#define STRATA_PACK_STREAM 0
#endif
// 32-byte moves for long blocks, chosen at run time (the build targets plain
// x86-64, where a fixed-size memcpy expands to 16-byte moves).
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define STRATA_PACK_AVX2 1
#else
#define STRATA_PACK_AVX2 0
#endif

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

// Packed outputs from this size on are written with streaming stores.
constexpr int64_t kStreamFromBytes = int64_t{1} << 20;

// One block: B bytes when B > 0, else `block` bytes. Stream: pack with
// non-temporal stores (B or block a multiple of 16, packed 16-byte aligned).
template <Dir D, int B, bool Stream>
STRATA_INLINE void copy_block(char* user, char* packed, int64_t block) {
#if STRATA_PACK_STREAM
  if constexpr (Stream) {
    const int64_t n = B > 0 ? B : block;
    for (int64_t j = 0; j < n; j += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(user + j));
      _mm_stream_si128(reinterpret_cast<__m128i*>(packed + j), v);
    }
    return;
  }
#endif
  copy_bytes<D>(user, packed, static_cast<size_t>(B > 0 ? B : block));
}

// Unpack: blocks ahead to prefetch (for writing) when consecutive blocks are
// in different lines. Stores commit in order, so the hardware keeps fewer
// store misses in flight than load misses; a prefetch helps there.
constexpr int64_t kUnpackAhead = 8;

// A row of n blocks whose user addresses are `stride` apart; returns the
// packed pointer after it.
template <Dir D, int B, bool Stream>
STRATA_INLINE char* row(char* user, char* packed, int64_t n, int64_t stride, int64_t block) {
  const int64_t step = B > 0 ? B : block;
  int64_t i = 0;
  if constexpr (D == Dir::unpack) {
    if (stride >= 64 || stride <= -64) {
      const int64_t ahead = kUnpackAhead * stride;
      for (; i + kUnpackAhead < n; ++i) {
        __builtin_prefetch(user + ahead, 1, 3);
        copy_block<D, B, Stream>(user, packed, block);
        user += stride;
        packed += step;
      }
    }
  }
  for (; i + 4 <= n; i += 4) {
    copy_block<D, B, Stream>(user, packed, block);
    copy_block<D, B, Stream>(user + stride, packed + step, block);
    copy_block<D, B, Stream>(user + 2 * stride, packed + 2 * step, block);
    copy_block<D, B, Stream>(user + 3 * stride, packed + 3 * step, block);
    user += 4 * stride;
    packed += 4 * step;
  }
  for (; i < n; ++i) {
    copy_block<D, B, Stream>(user, packed, block);
    user += stride;
    packed += step;
  }
  return packed;
}

// `rows` rows of n0 blocks: block stride s0 within a row, s1 between rows.
using RowsFn = void (*)(char* user, char* packed, int64_t n0, int64_t s0, int64_t rows, int64_t s1, int64_t block);

template <Dir D, int B, bool Stream>
void rows_of(char* user, char* packed, int64_t n0, int64_t s0, int64_t rows, int64_t s1, int64_t block) {
  for (int64_t r = 0; r < rows; ++r, user += s1) packed = row<D, B, Stream>(user, packed, n0, s0, block);
}

#if STRATA_PACK_AVX2
// Blocks that are a multiple of 32 bytes from this length on use AVX2 moves.
constexpr int64_t kAvx2FromBytes = 128;

bool have_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}

// rows_of for blocks of B (or `block`) bytes, a multiple of 32, in 32-byte
// moves; each block is copied before the next starts (unpack order).
template <Dir D, int B>
__attribute__((target("avx2"))) void rows_avx2(char* user, char* packed, int64_t n0, int64_t s0, int64_t rows,
                                               int64_t s1, int64_t block) {
  const int64_t len = B > 0 ? B : block;
  const bool ahead = D == Dir::unpack && (s0 >= 64 || s0 <= -64);
  for (int64_t r = 0; r < rows; ++r, user += s1) {
    char* u = user;
    for (int64_t i = 0; i < n0; ++i, u += s0, packed += len) {
      if (ahead && i + kUnpackAhead < n0) __builtin_prefetch(u + kUnpackAhead * s0, 1, 3);
      char* dst = D == Dir::pack ? packed : u;
      const char* src = D == Dir::pack ? u : packed;
      for (int64_t j = 0; j < len; j += 32) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + j)));
      }
    }
  }
}
#endif

template <Dir D>
RowsFn select_rows(int64_t block, bool stream) {
#if STRATA_PACK_STREAM
  if constexpr (D == Dir::pack) {
    if (stream) {
      switch (block) {
        case 64: return rows_of<D, 64, true>;
        case 128: return rows_of<D, 128, true>;
        case 256: return rows_of<D, 256, true>;
        case 512: return rows_of<D, 512, true>;
        default: return rows_of<D, 0, true>;
      }
    }
  }
#endif
#if STRATA_PACK_AVX2
  if (block >= kAvx2FromBytes && block % 32 == 0 && have_avx2()) {
    switch (block) {
      case 64: return rows_avx2<D, 64>;
      case 128: return rows_avx2<D, 128>;
      case 256: return rows_avx2<D, 256>;
      case 512: return rows_avx2<D, 512>;
      default: return rows_avx2<D, 0>;
    }
  }
#endif
  switch (block) {
    case 1: return rows_of<D, 1, false>;
    case 2: return rows_of<D, 2, false>;
    case 3: return rows_of<D, 3, false>;
    case 4: return rows_of<D, 4, false>;
    case 6: return rows_of<D, 6, false>;
    case 8: return rows_of<D, 8, false>;
    case 12: return rows_of<D, 12, false>;
    case 16: return rows_of<D, 16, false>;
    case 24: return rows_of<D, 24, false>;
    case 32: return rows_of<D, 32, false>;
    case 48: return rows_of<D, 48, false>;
    case 64: return rows_of<D, 64, false>;
    case 96: return rows_of<D, 96, false>;
    case 128: return rows_of<D, 128, false>;
    case 256: return rows_of<D, 256, false>;
    default: return rows_of<D, 0, false>;
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
  const bool stream = STRATA_PACK_STREAM && D == Dir::pack && (ke - kb) * block >= kStreamFromBytes && block >= 64 &&
                      block % 16 == 0 && reinterpret_cast<uintptr_t>(packed) % 16 == 0;
  const RowsFn rows = select_rows<D>(block, stream);
  const int64_t c0 = dims[0].count;
  const int64_t s0 = dims[0].stride;
  int64_t idx[kMaxOdometer];
  detail::block_position(dims, nd, kb, idx);
  int64_t off = detail::block_offset(layout.offset, dims, nd, kb);
  int64_t remaining = ke - kb;
  // Carries the odometer from dimension d outwards.
  auto carry = [&](int d) {
    for (; d < nd && idx[d] == dims[d].count; ++d) {
      idx[d] = 0;
      off -= dims[d].count * dims[d].stride;
      if (d + 1 < nd) {
        ++idx[d + 1];
        off += dims[d + 1].stride;
      }
    }
  };
  auto part_row = [&](int64_t n) {  // n blocks of the current row
    rows(base + off, packed, n, s0, 1, 0, block);
    packed += n * block;
    remaining -= n;
    idx[0] += n;
    off += n * s0;
    carry(0);
  };
  if (nd == 1) {
    rows(base + off, packed, remaining, s0, 1, 0, block);
  } else {
    const int64_t c1 = dims[1].count;
    const int64_t s1 = dims[1].stride;
    if (idx[0] != 0) part_row(std::min(c0 - idx[0], remaining));
    while (remaining >= c0) {  // whole rows, up to the end of the plane
      const int64_t n = std::min(c1 - idx[1], remaining / c0);
      rows(base + off, packed, c0, s0, n, s1, block);
      packed += n * c0 * block;
      remaining -= n * c0;
      idx[1] += n;
      off += n * s1;
      carry(1);
    }
    if (remaining > 0) part_row(remaining);
  }
#if STRATA_PACK_STREAM
  if (stream) _mm_sfence();  // order the streaming stores before what follows
#endif
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
  copy_range<Dir::unpack>(layout, static_cast<char*>(base), const_cast<char*>(static_cast<const char*>(packed)), first,
                          last);
}

}  // namespace strata
