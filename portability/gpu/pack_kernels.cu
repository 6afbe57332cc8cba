// Device pack/unpack of a canonical strided block: one kernel body for both
// directions, CUDA (nvcc) and HIP (hipcc), and its launchers.
//
// The kernel (plan in pack_plan.cpp):
//  - moves words of 1, 2, 4, 8 or 16 bytes, the largest dividing the block
//    length, every block start and the packed pointer (a 24-byte block with
//    8-byte alignment moves as 3 words of 8);
//  - threadIdx.x runs over the words of a block, threadIdx.y over blocks
//    (items: a block, or a segment of blockDim.x words of a long block), so
//    a warp's loads and stores of the packed side are consecutive words;
//  - each thread loads 4 items (2 of 16-byte words) before it stores any:
//    a small block costs a DRAM sector for a word, and the loads in flight
//    per thread are what keeps the memory system busy (grid-stride, the
//    items of a thread one grid width apart);
//  - item -> block offset: per item (never per word) one multiply-high
//    division per dimension but the outermost, in 32-bit arithmetic with
//    divisors prepared on the host whenever block and item numbers fit
//    (64-bit division is a long instruction sequence on GPUs), through the
//    shared index math (detail::block_offset) otherwise;
//  - the grid is capped to one resident wave (8 CTAs of 256 threads per
//    multiprocessor, 32 registers a thread); the kernel strides over the
//    rest.
// Unpack into a layout that addresses a byte twice (a zero or overlapping
// stride) leaves one of the packed values there, unspecified which (the
// host engine keeps the later one; MPI calls such a receive erroneous).
#include "portability/gpu/pack_device.hpp"

#include "base/log.hpp"
#include "portability/gpu/runtime_names.hpp"
#include "portability/layout/strided_index.hpp"
#include "portability/setup/host_device.hpp"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <mutex>

// A kernel parameter whose address is taken (the shared index math takes a
// pointer to the dimensions) stays in parameter space instead of being
// copied to local memory per thread (CUDA 11.7+, sm_70+).
#if defined(__CUDACC__) && !defined(__HIPCC__)
#define STRATA_GRID_CONSTANT __grid_constant__
#else
#define STRATA_GRID_CONSTANT
#endif

namespace strata::gpu {
namespace {

enum class Dir { pack, unpack };

// Threads per CTA (pack_plan.cpp's kCtaThreads), and CTAs of that size
// resident per multiprocessor (2048 threads), which the plan caps the grid
// to: a resident count that divides it keeps the last round full.
constexpr int kMaxCtaThreads = 256;
constexpr int kMinCtasPerSm = 8;
constexpr int kMaxUnroll = 4;

// The kernel's arguments, by value: the layout (or one sub-block of it) as a
// fixed-size StridedIndex, and this launch's range.
struct Args {
  detail::StridedIndex index;
  char* user = nullptr;    // the user's buffer (the layout's base)
  char* packed = nullptr;  // packed bytes of block `first` on
  uint64_t first = 0;      // first block of `index` moved by this launch
  uint64_t items = 0;      // blocks * segments
  uint64_t segments = 1;   // items per block
  uint64_t words = 0;      // words per block
  // 32-bit path: the dimension counts and `segments` as divisors.
  detail::FastDivisor count_div[detail::StridedIndex::kMaxDims];
  detail::FastDivisor segment_div;
};

// Byte offset of block b. 32-bit: unrolled over the dimensions (constant
// indices into the kernel parameter), a multiply-high per dimension but the
// outermost, which needs no division (b is below its count). 64-bit: the
// shared index math.
template <class I>
STRATA_DEVICE STRATA_INLINE int64_t offset_of(const Args& a, I b) {
  return detail::block_offset(a.index.offset, a.index.dims, a.index.ndims, static_cast<int64_t>(b));
}

template <>
STRATA_DEVICE STRATA_INLINE int64_t offset_of<uint32_t>(const Args& a, uint32_t b) {
  return detail::block_offset32<detail::StridedIndex::kMaxDims>(a.index.offset, a.index.dims, a.count_div,
                                                                a.index.ndims, b);
}

// The block of an item (segments: items per block).
template <class I>
STRATA_DEVICE STRATA_INLINE I block_of(const Args&, I item, I segments) {
  return item / segments;
}

template <>
STRATA_DEVICE STRATA_INLINE uint32_t block_of<uint32_t>(const Args& a, uint32_t item, uint32_t) {
  return detail::fast_divide(item, a.segment_div);
}

// Items each thread loads before it stores any: 4 words of up to 8 bytes, 2
// of 16 (32 bytes in flight per thread, 64 KiB per multiprocessor), within
// 32 registers so that 8 CTAs of 256 threads stay resident.
template <class W>
constexpr int unroll_of() {
  return sizeof(W) >= 16 ? 2 : 4;
}

// The one kernel body. W: the word type; I: the index type of items, blocks
// and words (uint32_t when they fit, else int64_t: fewer CTAs resident).
template <Dir D, class W, class I>
__global__ void __launch_bounds__(kMaxCtaThreads, sizeof(I) == 4 ? kMinCtasPerSm : kMinCtasPerSm / 2)
    strided_copy(const STRATA_GRID_CONSTANT Args a) {
  constexpr int kU = unroll_of<W>();
  const I items = static_cast<I>(a.items);
  const I segments = static_cast<I>(a.segments);
  const I words = static_cast<I>(a.words);
  const I rows = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.y);
  const I lane = static_cast<I>(threadIdx.x);
  const I seg_words = static_cast<I>(blockDim.x);
  const I first = static_cast<I>(a.first);
  for (I item = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.y) + static_cast<I>(threadIdx.y); item < items;
       item += kU * rows) {
    W v[kU];
    W* to[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      to[u] = nullptr;
      const I it = item + static_cast<I>(u) * rows;
      if (it < items) {
        I blk = it;
        I seg = 0;
        if (segments != 1) {
          blk = block_of<I>(a, it, segments);
          seg = it - blk * segments;
        }
        const I j = seg * seg_words + lane;
        if (j < words) {
          W* user = reinterpret_cast<W*>(a.user + offset_of<I>(a, first + blk)) + j;
          W* packed = reinterpret_cast<W*>(a.packed) + (static_cast<uint64_t>(blk) * static_cast<uint64_t>(words) + j);
          if constexpr (D == Dir::pack) {
            v[u] = *user;
            to[u] = packed;
          } else {
            v[u] = *packed;
            to[u] = user;
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (to[u] != nullptr) *to[u] = v[u];
    }
  }
}

// --- launchers ---------------------------------------------------------------

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Device properties, read once per device.
constexpr int kMaxDevices = 64;
std::atomic<bool> g_have_props[kMaxDevices];
DeviceProperties g_props[kMaxDevices];
std::mutex g_props_mutex;

Status cached_properties(const DeviceProperties** out) {
  int device = 0;
  STRATA_TRY(get_device(&device));
  if (device < 0 || device >= kMaxDevices) {
    STRATA_LOG(error, kDevice, "device pack: device number %d out of range", device);
    return Status::internal;
  }
  if (!g_have_props[device].load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(g_props_mutex);
    if (!g_have_props[device].load(std::memory_order_relaxed)) {
      STRATA_TRY(properties(device, &g_props[device]));
      g_have_props[device].store(true, std::memory_order_release);
    }
  }
  *out = &g_props[device];
  return Status::ok;
}

template <Dir D, class W>
void launch_word(const Args& a, dim3 grid, dim3 threads, gpuStream_t stream, bool narrow) {
  if (narrow) {
    strided_copy<D, W, uint32_t><<<grid, threads, 0, stream>>>(a);
  } else {
    strided_copy<D, W, int64_t><<<grid, threads, 0, stream>>>(a);
  }
}

const char* name_of(Dir d) { return d == Dir::pack ? "pack" : "unpack"; }

// One launch: `blocks` blocks of `a.index` from block `first` on.
template <Dir D>
Status launch_one(const LaunchPlan& plan, Args a, int64_t first, int64_t blocks, char* packed, bool counts32,
                  gpuStream_t stream) {
  a.first = static_cast<uint64_t>(first);
  a.packed = packed;
  const int64_t items = blocks * static_cast<int64_t>(a.segments);
  a.items = static_cast<uint64_t>(items);
  const int64_t y = plan.threads[1];
  const int64_t grid = std::min(plan.grid[0], ceil_div(items, y));
  const bool narrow = counts32 && static_cast<uint64_t>(first + blocks) <= UINT32_MAX && a.words + 1024 <= UINT32_MAX &&
                      static_cast<uint64_t>(items) + static_cast<uint64_t>(kMaxUnroll + 1) * grid * y <= UINT32_MAX;
  const dim3 g(static_cast<unsigned>(grid), 1, 1);
  const dim3 t(static_cast<unsigned>(plan.threads[0]), static_cast<unsigned>(plan.threads[1]), 1);
  switch (plan.word) {
    case 16: launch_word<D, uint4>(a, g, t, stream, narrow); break;
    case 8: launch_word<D, uint64_t>(a, g, t, stream, narrow); break;
    case 4: launch_word<D, uint32_t>(a, g, t, stream, narrow); break;
    case 2: launch_word<D, uint16_t>(a, g, t, stream, narrow); break;
    default: launch_word<D, uint8_t>(a, g, t, stream, narrow); break;
  }
  const gpuError_t err = gpuGetLastError();
  if (err != gpuSuccess) {
    STRATA_LOG(error, kDevice,
               "device %s: kernel launch failed: %s (block %" PRId64 " B, %d dims, word %d, %" PRId64
               " blocks from %" PRId64 ", grid %" PRId64 " x (%d, %d))",
               name_of(D), gpuGetErrorString(err), a.index.block, a.index.ndims, plan.word, blocks, first, grid,
               plan.threads[0], plan.threads[1]);
    return Status::device_error;
  }
  return Status::ok;
}

template <Dir D>
Status run(const StridedBlock& layout, char* user, char* packed, Stream stream, int64_t block_begin,
           int64_t block_end) noexcept {
  if (layout.block <= 0) return Status::ok;
  const int64_t count = layout.block_count();
  if (count <= 0) return Status::ok;
  if (block_end < 0) block_end = count;
  if (block_begin < 0 || block_begin > block_end || block_end > count) {
    STRATA_LOG(error, kDevice, "device %s: block range [%" PRId64 ", %" PRId64 ") outside the %" PRId64 " blocks",
               name_of(D), block_begin, block_end, count);
    return Status::invalid_argument;
  }
  if (block_begin == block_end) return Status::ok;
  if (packed == nullptr) {
    STRATA_LOG(error, kDevice, "device %s: null packed buffer", name_of(D));
    return Status::invalid_argument;
  }
  const DeviceProperties* props = nullptr;
  STRATA_TRY(cached_properties(&props));
  const LaunchPlan plan = plan_launch(layout, user, packed, block_end - block_begin, *props);
  if (plan.launches <= 0 || plan.grid[0] <= 0) return Status::ok;

  Args a;
  const int nd = static_cast<int>(layout.dims.size());
  const int inner = std::min(nd, detail::StridedIndex::kMaxDims);
  a.index.block = layout.block;
  a.index.ndims = inner;
  for (int d = 0; d < inner; ++d) a.index.dims[d] = layout.dims[static_cast<size_t>(d)];
  a.user = user;
  a.words = static_cast<uint64_t>(plan.words_per_block);
  a.segments = static_cast<uint64_t>(ceil_div(plan.words_per_block, plan.threads[0]));
  // Divisors of the 32-bit path (unused by the 64-bit one, which any count
  // of 2^32 or more selects).
  bool counts32 = true;
  for (int d = 0; d < inner; ++d) {
    const int64_t c = layout.dims[static_cast<size_t>(d)].count;
    counts32 = counts32 && c <= UINT32_MAX;
    a.count_div[d] = detail::make_fast_divisor(c > 0 && c <= UINT32_MAX ? static_cast<uint32_t>(c) : 1u);
  }
  a.segment_div = detail::make_fast_divisor(a.segments <= UINT32_MAX ? static_cast<uint32_t>(a.segments) : 1u);
  const gpuStream_t s = static_cast<gpuStream_t>(stream);
  if (nd <= detail::StridedIndex::kMaxDims) {
    a.index.offset = layout.offset;
    return launch_one<D>(plan, a, block_begin, block_end - block_begin, packed, counts32, s);
  }
  // More dimensions than a kernel takes: one launch per sub-block of the
  // inner kMaxDims dimensions, its offset from the outer ones.
  int64_t sub = 1;
  for (int d = 0; d < inner; ++d) sub *= layout.dims[static_cast<size_t>(d)].count;
  for (int64_t k = block_begin / sub; k * sub < block_end; ++k) {
    const int64_t lo = std::max(block_begin, k * sub);
    const int64_t hi = std::min(block_end, (k + 1) * sub);
    a.index.offset = detail::block_offset(layout.offset, layout.dims.data() + inner, nd - inner, k);
    STRATA_TRY(launch_one<D>(plan, a, lo - k * sub, hi - lo, packed + (lo - block_begin) * layout.block, counts32, s));
  }
  return Status::ok;
}

}  // namespace

Status pack_async(const StridedBlock& layout, const void* base, void* packed, Stream stream, int64_t block_begin,
                  int64_t block_end) noexcept {
  return run<Dir::pack>(layout, const_cast<char*>(static_cast<const char*>(base)), static_cast<char*>(packed), stream,
                        block_begin, block_end);
}

Status unpack_async(const StridedBlock& layout, const void* packed, void* base, Stream stream, int64_t block_begin,
                    int64_t block_end) noexcept {
  return run<Dir::unpack>(layout, static_cast<char*>(base), const_cast<char*>(static_cast<const char*>(packed)), stream,
                          block_begin, block_end);
}

}  // namespace strata::gpu
