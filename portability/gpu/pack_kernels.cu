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
//    rest;
//  - packs of 1-4-byte blocks close together move in groups
//    (LaunchPlan::group): 8 packed bytes of consecutive blocks per item, one
//    index computation and one 8-byte packed store for 8, 4 or 2 blocks
//    (grouped_pack); unpacks of them in tiles of 32 threads, lane l taking
//    blocks l, l + 32, ... of the tile (tiled_unpack): one thread's group
//    of stores would land in different sectors, so a warp's stores would
//    spread over more sectors than consecutive blocks' (measured 1.4-1.8x
//    slower on an H100).
// Unpack into a layout that addresses a byte twice (a zero or overlapping
// stride) leaves one of the packed values there, unspecified which (the
// host engine keeps the later one; MPI calls such a receive erroneous).
#include "portability/gpu/pack_device.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "portability/gpu/runtime_names.hpp"
#include "portability/layout/strided_index.hpp"
#include "portability/setup/host_device.hpp"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <vector>

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

config::BoolParam g_groups{"STRATA_PACK_GROUPS", true,
                           "Device pack kernels move blocks of 1, 2 or 4 bytes at an innermost stride of at most 64 "
                           "B in runs (a pack: 8 packed bytes per thread; an unpack: tiles of 32 threads x 8 bytes) "
                           "with one index computation per run; 0: one block per item (for measurements)"};

enum class Dir { pack, unpack };

Grouping grouping(Dir d) {
  if (!g_groups.get()) return Grouping::none;
  return d == Dir::pack ? Grouping::pack : Grouping::unpack;
}

// Threads per CTA (pack_plan.cpp's kCtaThreads), and CTAs of that size
// resident per multiprocessor (2048 threads), which the plan caps the grid
// to: a resident count that divides it keeps the last round full.
constexpr int kMaxCtaThreads = 256;
constexpr int kMinCtasPerSm = 8;
constexpr int kMaxUnroll = 4;

// The kernel's arguments, by value: the layout (or one sub-block of it) as
// an offset and N dimensions, and this launch's range. N: StridedIndex's
// kMaxDims for one layout; kBatchDims for the parts of a batch (smaller, so
// that many parts fit in one launch's parameters).
template <int N>
struct PartArgs {
  int64_t offset = 0;
  int64_t block = 0;
  int ndims = 0;
  strata::Stream dims[N];
  char* user = nullptr;    // the user's buffer (the layout's base)
  char* packed = nullptr;  // packed bytes of block `first` on
  uint64_t first = 0;      // first block of the layout moved by this launch
  uint64_t items = 0;      // blocks * segments
  uint64_t segments = 1;   // items per block
  uint64_t words = 0;      // words per block
  // 32-bit path: the dimension counts and `segments` as divisors.
  detail::FastDivisor count_div[N];
  detail::FastDivisor segment_div;
};
constexpr int kMaxDims = detail::StridedIndex::kMaxDims;
using Args = PartArgs<kMaxDims>;

// A batch: up to kBatchParts layouts of at most kBatchDims dimensions moved
// by one launch (one word size and index width for all). CTAs
// [cta_begin[p], cta_begin[p+1]) serve part p, with rows of shape[p]
// threads (a power of two) over a block's words. HIP takes 4 KiB of kernel
// parameters; CUDA 12.1 and later take 32 KiB where every architecture
// built for is sm_70 or later. A launch costs the host the same up to 8 KiB
// of them (3.5-4.2 µs on the lent H200 host, 16 B to 8 KiB alike), so such
// a CUDA build batches twice the parts: a 2-rank halo's 26 messages a flush
// take one pack launch instead of two, and its receives one unpack launch.
#if defined(__CUDACC__) && !defined(__HIPCC__) && defined(__CUDA_ARCH_LIST__) && CUDART_VERSION >= 12010
constexpr int kBuiltArchs[] = {__CUDA_ARCH_LIST__};
constexpr bool kLargeParams = [] {
  for (int arch : kBuiltArchs) {
    if (arch < 700) return false;
  }
  return true;
}();
#else
constexpr bool kLargeParams = false;
#endif
constexpr int kBatchDims = 4;
constexpr int kBatchParts = kLargeParams ? 32 : 16;
constexpr size_t kBatchParamBytes = kLargeParams ? 8192 : 4096;
struct BatchArgs {
  int parts = 0;
  uint32_t cta_begin[kBatchParts + 1] = {};
  uint16_t shape[kBatchParts] = {};
  PartArgs<kBatchDims> part[kBatchParts];
};
static_assert(sizeof(BatchArgs) <= kBatchParamBytes, "a batch must fit the backend's kernel parameter space");

// Byte offset of block b. 32-bit: unrolled over the dimensions (constant
// indices into the kernel parameter), a multiply-high per dimension but the
// outermost, which needs no division (b is below its count). 64-bit: the
// shared index math.
template <class I, int N>
struct OffsetOf {
  STRATA_DEVICE STRATA_INLINE static int64_t of(const PartArgs<N>& a, I b) {
    return detail::block_offset(a.offset, a.dims, a.ndims, static_cast<int64_t>(b));
  }
  STRATA_DEVICE STRATA_INLINE static I block_of(const PartArgs<N>&, I item, I segments) { return item / segments; }
};

template <int N>
struct OffsetOf<uint32_t, N> {
  STRATA_DEVICE STRATA_INLINE static int64_t of(const PartArgs<N>& a, uint32_t b) {
    return detail::block_offset32<N>(a.offset, a.dims, a.count_div, a.ndims, b);
  }
  STRATA_DEVICE STRATA_INLINE static uint32_t block_of(const PartArgs<N>& a, uint32_t item, uint32_t) {
    return detail::fast_divide(item, a.segment_div);
  }
};

// Items each thread loads before it stores any: 4 words of up to 8 bytes, 2
// of 16 (32 bytes in flight per thread, 64 KiB per multiprocessor), within
// 32 registers so that 8 CTAs of 256 threads stay resident.
template <class W>
constexpr int unroll_of() {
  return sizeof(W) >= 16 ? 2 : 4;
}

// The one kernel body. W: the word type; I: the index type of items, blocks
// and words (uint32_t when they fit, else int64_t: fewer CTAs resident).
// `lane` runs over the seg_words words of a segment; `row` is this thread's
// first item and `rows` the number of threads rows over the part's items.
template <Dir D, class W, class I, int N>
STRATA_DEVICE STRATA_INLINE void copy_items(const PartArgs<N>& a, I lane, I seg_words, I row, I rows) {
  constexpr int kU = unroll_of<W>();
  using Index = OffsetOf<I, N>;
  const I items = static_cast<I>(a.items);
  const I segments = static_cast<I>(a.segments);
  const I words = static_cast<I>(a.words);
  const I first = static_cast<I>(a.first);
  for (I item = row; item < items; item += kU * rows) {
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
          blk = Index::block_of(a, it, segments);
          seg = it - blk * segments;
        }
        const I j = seg * seg_words + lane;
        if (j < words) {
          W* user = reinterpret_cast<W*>(a.user + Index::of(a, first + blk)) + j;
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

// Packs in groups of narrow blocks (LaunchPlan::group): an item is kG
// consecutive blocks of the innermost dimension, whose a.dims[0] counts
// groups (its stride is kG blocks' strides), and one packed word of
// kGroupBytes. Both vendors' GPUs are little-endian: block g of a group is
// the g-th N of the word. Each thread loads the blocks of two groups before
// it stores.
template <class N, class I>
STRATA_DEVICE STRATA_INLINE void pack_groups(const Args& a, I row, I rows) {
  constexpr int kG = kGroupBytes / static_cast<int>(sizeof(N));
  constexpr int kU = 2;
  constexpr int kBits = 8 * static_cast<int>(sizeof(N));
  static_assert(kG * sizeof(N) == sizeof(uint64_t), "a group is one 8-byte packed word");
  using Index = OffsetOf<I, kMaxDims>;
  const int64_t step = a.dims[0].stride / kG;  // between the blocks of a group
  const I items = static_cast<I>(a.items);
  const I first = static_cast<I>(a.first);
  uint64_t* packed = reinterpret_cast<uint64_t*>(a.packed);
  for (I item = row; item < items; item += kU * rows) {
    uint64_t v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const I it = item + static_cast<I>(u) * rows;
      v[u] = 0;
      if (it < items) {
        const char* user = a.user + Index::of(a, first + it);
#pragma unroll
        for (int g = 0; g < kG; ++g)
          v[u] |= static_cast<uint64_t>(*reinterpret_cast<const N*>(user + g * step)) << (kBits * g);
      }
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const I it = item + static_cast<I>(u) * rows;
      if (it < items) packed[it] = v[u];
    }
  }
}

// Unpacks in tiles of narrow blocks (LaunchPlan::group, lanes): an item is
// a tile of kTileLanes * kG consecutive blocks of the innermost dimension
// (a.dims[0] counts tiles; kG is 8 / sizeof(N) blocks a lane, fewer where
// rows are shorter), moved by kTileLanes threads; lane l takes the
// tile's blocks l, l + kTileLanes, ..., so that each load and store
// instruction of a warp covers consecutive blocks, as one block per item
// does, for one index computation per tile instead of one per block.
template <class N, int kG, class I>
STRATA_DEVICE STRATA_INLINE void unpack_tiles(const Args& a, I lane, I tile0, I tiles_step) {
  static_assert(kG >= 2 && kG * sizeof(N) <= kGroupBytes, "a lane moves up to 8 bytes of a tile");
  constexpr int kRun = kTileLanes * kG;
  using Index = OffsetOf<I, kMaxDims>;
  const int64_t step = a.dims[0].stride / kRun;  // between consecutive blocks
  const I items = static_cast<I>(a.items);
  const I first = static_cast<I>(a.first);
  const N* packed = reinterpret_cast<const N*>(a.packed);
  for (I tile = tile0; tile < items; tile += tiles_step) {
    char* user = a.user + Index::of(a, first + tile) + static_cast<int64_t>(lane) * step;
    const N* from = packed + static_cast<uint64_t>(tile) * kRun + lane;
    N v[kG];
#pragma unroll
    for (int g = 0; g < kG; ++g) v[g] = from[g * kTileLanes];
#pragma unroll
    for (int g = 0; g < kG; ++g) *reinterpret_cast<N*>(user + g * kTileLanes * step) = v[g];
  }
}

// One layout: threadIdx.x over the words of a segment, threadIdx.y over
// items.
template <Dir D, class W, class I>
__global__ void __launch_bounds__(kMaxCtaThreads, sizeof(I) == 4 ? kMinCtasPerSm : kMinCtasPerSm / 2)
    strided_copy(const STRATA_GRID_CONSTANT Args a) {
  copy_items<D, W, I>(a, static_cast<I>(threadIdx.x), static_cast<I>(blockDim.x),
                      static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.y) + static_cast<I>(threadIdx.y),
                      static_cast<I>(gridDim.x) * static_cast<I>(blockDim.y));
}

// A pack of one layout in groups of narrow blocks (threadIdx.x is always 0).
template <class N, class I>
__global__ void __launch_bounds__(kMaxCtaThreads, sizeof(I) == 4 ? kMinCtasPerSm : kMinCtasPerSm / 2)
    grouped_pack(const STRATA_GRID_CONSTANT Args a) {
  pack_groups<N, I>(a, static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.y) + static_cast<I>(threadIdx.y),
                    static_cast<I>(gridDim.x) * static_cast<I>(blockDim.y));
}

// An unpack of one layout in tiles of narrow blocks (threadIdx.x is always
// 0; blockDim.y is a multiple of kTileLanes).
template <class N, int kG, class I>
__global__ void __launch_bounds__(kMaxCtaThreads, sizeof(I) == 4 ? kMinCtasPerSm : kMinCtasPerSm / 2)
    tiled_unpack(const STRATA_GRID_CONSTANT Args a) {
  const I tiles_per_cta = static_cast<I>(blockDim.y) / kTileLanes;
  unpack_tiles<N, kG, I>(a, static_cast<I>(threadIdx.y) % kTileLanes,
                         static_cast<I>(blockIdx.x) * tiles_per_cta + static_cast<I>(threadIdx.y) / kTileLanes,
                         static_cast<I>(gridDim.x) * tiles_per_cta);
}

// A batch (one-dimensional CTAs of kMaxCtaThreads threads): each CTA finds
// its part, then shapes its threads as that part's rows.
template <Dir D, class W, class I>
__global__ void __launch_bounds__(kMaxCtaThreads, sizeof(I) == 4 ? kMinCtasPerSm : kMinCtasPerSm / 2)
    strided_copy_batch(const STRATA_GRID_CONSTANT BatchArgs b) {
  const uint32_t cta = blockIdx.x;
  int p = 0;
  while (p + 1 < b.parts && cta >= b.cta_begin[p + 1]) ++p;
  const I x = static_cast<I>(b.shape[p]);
  const I y = static_cast<I>(kMaxCtaThreads) / x;
  const I t = static_cast<I>(threadIdx.x);
  const I lane = t % x;
  const I ctas = static_cast<I>(b.cta_begin[p + 1] - b.cta_begin[p]);
  copy_items<D, W, I>(b.part[p], lane, x, static_cast<I>(cta - b.cta_begin[p]) * y + t / x, ctas * y);
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

template <class N>
void launch_grouped_pack(const Args& a, dim3 grid, dim3 threads, gpuStream_t stream, bool narrow) {
  if (narrow) {
    grouped_pack<N, uint32_t><<<grid, threads, 0, stream>>>(a);
  } else {
    grouped_pack<N, int64_t><<<grid, threads, 0, stream>>>(a);
  }
}

template <class N, int kG>
void launch_tiled_unpack(const Args& a, dim3 grid, dim3 threads, gpuStream_t stream, bool narrow) {
  if (narrow) {
    tiled_unpack<N, kG, uint32_t><<<grid, threads, 0, stream>>>(a);
  } else {
    tiled_unpack<N, kG, int64_t><<<grid, threads, 0, stream>>>(a);
  }
}

// The tiled unpack of `word`-byte blocks, `per_lane` of them a lane.
void launch_tiles(int word, int per_lane, const Args& a, dim3 grid, dim3 threads, gpuStream_t stream, bool narrow) {
  switch (word * 16 + per_lane) {
    case 4 * 16 + 2: launch_tiled_unpack<uint32_t, 2>(a, grid, threads, stream, narrow); break;
    case 2 * 16 + 4: launch_tiled_unpack<uint16_t, 4>(a, grid, threads, stream, narrow); break;
    case 2 * 16 + 2: launch_tiled_unpack<uint16_t, 2>(a, grid, threads, stream, narrow); break;
    case 1 * 16 + 8: launch_tiled_unpack<uint8_t, 8>(a, grid, threads, stream, narrow); break;
    case 1 * 16 + 4: launch_tiled_unpack<uint8_t, 4>(a, grid, threads, stream, narrow); break;
    default: launch_tiled_unpack<uint8_t, 2>(a, grid, threads, stream, narrow); break;
  }
}

template <Dir D, class W>
void launch_batch_word(const BatchArgs& b, unsigned ctas, gpuStream_t stream, bool narrow) {
  if (narrow) {
    strided_copy_batch<D, W, uint32_t><<<ctas, kMaxCtaThreads, 0, stream>>>(b);
  } else {
    strided_copy_batch<D, W, int64_t><<<ctas, kMaxCtaThreads, 0, stream>>>(b);
  }
}

// Calls f with a value of the word type of `word` bytes.
template <class F>
void with_word(int word, F&& f) {
  switch (word) {
    case 16: f(uint4{}); break;
    case 8: f(uint64_t{}); break;
    case 4: f(uint32_t{}); break;
    case 2: f(uint16_t{}); break;
    default: f(uint8_t{}); break;
  }
}

const char* name_of(Dir d) { return d == Dir::pack ? "pack" : "unpack"; }

Status launch_error(Dir d, const char* what) {
  const gpuError_t err = gpuGetLastError();
  if (err == gpuSuccess) return Status::ok;
  STRATA_LOG(error, kDevice, "device %s: kernel launch failed: %s (%s)", name_of(d), gpuGetErrorString(err), what);
  return Status::device_error;
}

// The fields of one layout's arguments that do not depend on the range:
// the inner N dimensions, the words and segments of the plan, the divisors
// of the 32-bit path (unused by the 64-bit one, which any count of 2^32 or
// more selects). Returns whether every count fits 32 bits.
template <int N>
bool fill_layout(PartArgs<N>& a, const StridedBlock& layout, const LaunchPlan& plan, char* user) {
  const int inner = std::min(static_cast<int>(layout.dims.size()), N);
  a.block = layout.block;
  a.ndims = inner;
  for (int d = 0; d < inner; ++d) a.dims[d] = layout.dims[static_cast<size_t>(d)];
  if (plan.group > 1) {  // groups of blocks: the innermost dimension counts groups
    a.block *= plan.group;
    a.dims[0].count /= plan.group;
    a.dims[0].stride *= plan.group;
  }
  a.offset = layout.offset;
  a.user = user;
  a.words = static_cast<uint64_t>(plan.words_per_block);
  a.segments = static_cast<uint64_t>(ceil_div(plan.words_per_block, plan.threads[0]));
  bool counts32 = true;
  for (int d = 0; d < inner; ++d) {
    const int64_t c = a.dims[d].count;
    counts32 = counts32 && c <= UINT32_MAX;
    a.count_div[d] = detail::make_fast_divisor(c > 0 && c <= UINT32_MAX ? static_cast<uint32_t>(c) : 1u);
  }
  a.segment_div = detail::make_fast_divisor(a.segments <= UINT32_MAX ? static_cast<uint32_t>(a.segments) : 1u);
  return counts32;
}

// Sets the range of a launch (`blocks` blocks from `first`, packed bytes at
// `packed`) and returns its CTAs of `y` rows; `narrow` says whether every
// item, block and word number of it fits the 32-bit path.
template <int N>
int64_t set_range(PartArgs<N>& a, const LaunchPlan& plan, int64_t y, int64_t first, int64_t blocks, char* packed,
                  bool counts32, bool* narrow) {
  a.first = static_cast<uint64_t>(first);
  a.packed = packed;
  const int64_t items = blocks * static_cast<int64_t>(a.segments);
  a.items = static_cast<uint64_t>(items);
  const int64_t grid = std::min(plan.grid[0], ceil_div(items, y));
  *narrow = counts32 && static_cast<uint64_t>(first + blocks) <= UINT32_MAX && a.words + 1024 <= UINT32_MAX &&
            static_cast<uint64_t>(items) + static_cast<uint64_t>(kMaxUnroll + 1) * grid * y <= UINT32_MAX;
  return grid;
}

// One launch: `blocks` blocks of the layout in `a` from block `first` on.
template <Dir D>
Status launch_one(const LaunchPlan& plan, Args a, int64_t first, int64_t blocks, char* packed, bool counts32,
                  gpuStream_t stream) {
  bool narrow = false;
  const int64_t grid = set_range(a, plan, plan.threads[1] / plan.lanes, first / plan.group, blocks / plan.group, packed,
                                 counts32, &narrow);
  const dim3 g(static_cast<unsigned>(grid), 1, 1);
  const dim3 t(static_cast<unsigned>(plan.threads[0]), static_cast<unsigned>(plan.threads[1]), 1);
  if (D == Dir::pack && plan.group > 1) {  // pack groups (grouping())
    switch (plan.word) {
      case 4: launch_grouped_pack<uint32_t>(a, g, t, stream, narrow); break;
      case 2: launch_grouped_pack<uint16_t>(a, g, t, stream, narrow); break;
      default: launch_grouped_pack<uint8_t>(a, g, t, stream, narrow); break;
    }
  } else if (D == Dir::unpack && plan.group > 1) {  // unpack tiles
    launch_tiles(plan.word, plan.group / plan.lanes, a, g, t, stream, narrow);
  } else {
    with_word(plan.word, [&](auto w) { launch_word<D, decltype(w)>(a, g, t, stream, narrow); });
  }
  if (gpuPeekAtLastError() == gpuSuccess) return Status::ok;
  char what[160];
  std::snprintf(what, sizeof(what),
                "block %" PRId64 " B, %d dims, word %d, group %d, %" PRId64 " blocks from %" PRId64 ", grid %" PRId64
                " x (%d, %d)",
                a.block, a.ndims, plan.word, plan.group, blocks, first, grid, plan.threads[0], plan.threads[1]);
  return launch_error(D, what);
}

// Checks a block range of `layout` and resolves block_end -1; `*empty` when
// there is nothing to move.
Status check_range(Dir d, const StridedBlock& layout, const char* packed, int64_t block_begin, int64_t* block_end,
                   bool* empty) {
  *empty = true;
  if (layout.block <= 0) return Status::ok;
  const int64_t count = layout.block_count();
  if (count <= 0) return Status::ok;
  if (*block_end < 0) *block_end = count;
  if (block_begin < 0 || block_begin > *block_end || *block_end > count) {
    STRATA_LOG(error, kDevice, "device %s: block range [%" PRId64 ", %" PRId64 ") outside the %" PRId64 " blocks",
               name_of(d), block_begin, *block_end, count);
    return Status::invalid_argument;
  }
  if (block_begin == *block_end) return Status::ok;
  if (packed == nullptr) {
    STRATA_LOG(error, kDevice, "device %s: null packed buffer", name_of(d));
    return Status::invalid_argument;
  }
  *empty = false;
  return Status::ok;
}

template <Dir D>
Status run(const StridedBlock& layout, char* user, char* packed, Stream stream, int64_t block_begin,
           int64_t block_end) noexcept {
  bool empty = true;
  STRATA_TRY(check_range(D, layout, packed, block_begin, &block_end, &empty));
  if (empty) return Status::ok;
  const DeviceProperties* props = nullptr;
  STRATA_TRY(cached_properties(&props));
  const LaunchPlan plan = plan_launch(layout, user, packed, block_end - block_begin, *props, block_begin, grouping(D));
  if (plan.launches <= 0 || plan.grid[0] <= 0) return Status::ok;

  Args a;
  const bool counts32 = fill_layout(a, layout, plan, user);
  const gpuStream_t s = static_cast<gpuStream_t>(stream);
  const int nd = static_cast<int>(layout.dims.size());
  if (nd <= kMaxDims) return launch_one<D>(plan, a, block_begin, block_end - block_begin, packed, counts32, s);
  // More dimensions than a kernel takes: one launch per sub-block of the
  // inner kMaxDims dimensions, its offset from the outer ones.
  const int inner = kMaxDims;
  int64_t sub = 1;
  for (int d = 0; d < inner; ++d) sub *= layout.dims[static_cast<size_t>(d)].count;
  for (int64_t k = block_begin / sub; k * sub < block_end; ++k) {
    const int64_t lo = std::max(block_begin, k * sub);
    const int64_t hi = std::min(block_end, (k + 1) * sub);
    a.offset = detail::block_offset(layout.offset, layout.dims.data() + inner, nd - inner, k);
    STRATA_TRY(launch_one<D>(plan, a, lo - k * sub, hi - lo, packed + (lo - block_begin) * layout.block, counts32, s));
  }
  return Status::ok;
}

// A part of a batch, ready to launch.
struct ReadyPart {
  PartArgs<kBatchDims> args;
  int word = 1;
  bool narrow = true;
  uint16_t shape = 1;
  uint32_t ctas = 1;
};

// Launches the parts `members` of `ready` (one word size and index width),
// kBatchParts at a time.
template <Dir D>
Status launch_group(const std::vector<ReadyPart>& ready, const std::vector<size_t>& members, gpuStream_t s) {
  for (size_t at = 0; at < members.size(); at += kBatchParts) {
    BatchArgs b;
    const size_t n = std::min<size_t>(kBatchParts, members.size() - at);
    b.parts = static_cast<int>(n);
    uint32_t ctas = 0;
    for (size_t k = 0; k < n; ++k) {
      const ReadyPart& r = ready[members[at + k]];
      b.part[k] = r.args;
      b.shape[k] = r.shape;
      b.cta_begin[k] = ctas;
      ctas += r.ctas;
    }
    b.cta_begin[n] = ctas;
    const ReadyPart& first = ready[members[at]];
    with_word(first.word, [&](auto w) { launch_batch_word<D, decltype(w)>(b, ctas, s, first.narrow); });
    if (gpuPeekAtLastError() != gpuSuccess) {
      char what[96];
      std::snprintf(what, sizeof(what), "a batch of %zu layouts, word %d, %u CTAs", n, first.word, ctas);
      return launch_error(D, what);
    }
  }
  return Status::ok;
}

// Layouts of at most this many bytes, of different word sizes, share a
// launch in the smallest of their words of at least kMergeWordFloor bytes:
// each launch of a batch costs microseconds of host time, more than moving
// a few hundred KiB in narrower words costs the device. A 2-rank halo
// exchange (26 layouts of 8- and 16-byte words a flush) spent 1-3 µs less
// in its pack and in its unpack wait on 2 x H200 (STRATA_SUMMARY, three
// alternated pairs).
constexpr int64_t kMergeBytes = int64_t{256} << 10;
constexpr int kMergeWordFloor = 4;

// A job's part of a batch from its plan; false where the job is not one for
// a batch (it is launched alone): too many dimensions for a batch part, a
// device with smaller CTAs, or groups of narrow blocks (the batch kernel
// moves one block per item).
bool batch_part(const PackJob& j, int64_t end, const LaunchPlan& plan, ReadyPart* r) {
  const int64_t y = kMaxCtaThreads / std::max<int64_t>(plan.threads[0], 1);
  if (static_cast<int64_t>(j.layout->dims.size()) > kBatchDims || plan.threads[1] != y || plan.group > 1) return false;
  const bool counts32 = fill_layout(r->args, *j.layout, plan, j.user);
  r->ctas = static_cast<uint32_t>(
      set_range(r->args, plan, y, j.block_begin, end - j.block_begin, j.packed, counts32, &r->narrow));
  r->word = plan.word;
  r->shape = static_cast<uint16_t>(plan.threads[0]);
  return true;
}

template <Dir D>
Status run_batch(const PackJob* jobs, size_t count, Stream stream) noexcept {
  const DeviceProperties* props = nullptr;
  STRATA_TRY(cached_properties(&props));
  const gpuStream_t s = static_cast<gpuStream_t>(stream);
  struct Small {
    size_t ready;  // its place in `ready`
    size_t job;
    int64_t end;
  };
  static thread_local std::vector<ReadyPart> ready;
  static thread_local std::vector<size_t> members;
  static thread_local std::vector<Small> small;
  ready.clear();
  small.clear();
  int merge_word = 16;
  for (size_t i = 0; i < count; ++i) {
    const PackJob& j = jobs[i];
    int64_t end = j.block_end;
    bool empty = true;
    STRATA_TRY(check_range(D, *j.layout, j.packed, j.block_begin, &end, &empty));
    if (empty) continue;
    const LaunchPlan plan =
        plan_launch(*j.layout, j.user, j.packed, end - j.block_begin, *props, j.block_begin, grouping(D));
    if (plan.launches <= 0 || plan.grid[0] <= 0) continue;
    ReadyPart r;
    if (!batch_part(j, end, plan, &r)) {
      STRATA_TRY(run<D>(*j.layout, j.user, j.packed, stream, j.block_begin, end));
      continue;
    }
    if ((end - j.block_begin) * j.layout->block <= kMergeBytes && r.word >= kMergeWordFloor) {
      small.push_back({ready.size(), i, end});
      merge_word = std::min(merge_word, r.word);
    }
    ready.push_back(r);
  }
  // The small parts of wider words, planned again in the smallest word.
  for (const Small& m : small) {
    if (ready[m.ready].word == merge_word) continue;
    const PackJob& j = jobs[m.job];
    const LaunchPlan plan = plan_launch(*j.layout, j.user, j.packed, m.end - j.block_begin, *props, j.block_begin,
                                        Grouping::none, merge_word);
    ReadyPart r;
    if (batch_part(j, m.end, plan, &r)) ready[m.ready] = r;
  }
  // One launch per (word, index width) and kBatchParts parts.
  for (int word : {16, 8, 4, 2, 1}) {
    for (bool narrow : {true, false}) {
      members.clear();
      for (size_t i = 0; i < ready.size(); ++i) {
        if (ready[i].word == word && ready[i].narrow == narrow) members.push_back(i);
      }
      if (!members.empty()) STRATA_TRY(launch_group<D>(ready, members, s));
    }
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

Status pack_batch_async(const PackJob* jobs, size_t count, Stream stream) noexcept {
  try {
    return run_batch<Dir::pack>(jobs, count, stream);
  } catch (...) {
    return Status::out_of_memory;
  }
}

Status unpack_batch_async(const PackJob* jobs, size_t count, Stream stream) noexcept {
  try {
    return run_batch<Dir::unpack>(jobs, count, stream);
  } catch (...) {
    return Status::out_of_memory;
  }
}

}  // namespace strata::gpu
