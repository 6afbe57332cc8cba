// The launch plan of the device pack/unpack kernels (pack_kernels.cu), host
// C++ only, so that it is built and tested in every build.
//
// How the kernels read a plan: a block of the layout is words_per_block words
// of `word` bytes; a CTA row of threads[0] threads (a power of two) moves one
// segment of threads[0] consecutive words of one block, one word per thread;
// the threads[1] rows of a CTA take consecutive items, an item being one
// segment of one block (blocks of at most threads[0] words are one segment,
// longer ones several), or one run of `group` narrow blocks (a pack group
// of one thread, an unpack tile of `lanes` threads). The grid
// covers the items once or, when that would be more CTAs than the device
// holds at once, the kernels stride over them
// (several items per thread, loaded before any is stored).
#include "portability/gpu/pack_device.hpp"

#include "portability/layout/strided_index.hpp"

#include <algorithm>
#include <cstdint>

namespace strata::gpu {
namespace {

// Threads per CTA, and the most threads over the words of one block.
constexpr int kCtaThreads = 256;
constexpr int kMaxThreadsX = 256;
// Threads one multiprocessor holds at once (NVIDIA sm_80/sm_90: 2048; AMD
// CDNA2 CU: 32 wavefronts of 64); the grid is capped to one such wave.
constexpr int64_t kResidentThreadsPerSm = 2048;
// Grid cap when the properties carry no multiprocessor count.
constexpr int64_t kFallbackMaxCtas = 1024;

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Word: the lowest set bit of everything a block start or a packed word
// address is made of (two's complement keeps the low bits of a negative
// stride; a zero stride adds none), at most 16. Dimensions of one
// repetition never move a block start.
int word_of(const StridedBlock& layout, const void* base, const void* packed) {
  uint64_t bits = static_cast<uint64_t>(layout.block) | reinterpret_cast<uintptr_t>(packed) |
                  (reinterpret_cast<uintptr_t>(base) + static_cast<uint64_t>(layout.offset));
  for (const strata::Stream& d : layout.dims) {
    if (d.count > 1) bits |= static_cast<uint64_t>(d.stride);
  }
  const uint64_t low = bits & (~bits + 1);
  return low == 0 || low >= 16 ? 16 : static_cast<int>(low);
}

// Runs of narrow blocks: a block of 1-4 bytes per item costs its index
// arithmetic for one narrow load and store, so the kernels are bound by
// instructions, not memory, while consecutive blocks sit within a few
// sectors of each other. A run of consecutive blocks of the innermost
// dimension takes one index computation. A pack group is one thread's
// (one packed store of kGroupBytes); an unpack tile is spread over
// kTileLanes threads so that each store instruction of a warp still covers
// consecutive blocks (one thread's group of stores would land in as many
// sectors). Runs must not straddle a row (innermost count) or the launch's
// range, nor pack groups a packed word's alignment. Sets plan->group and
// plan->lanes where a run fits.
void choose_group(const StridedBlock& layout, const void* packed, int64_t blocks, int64_t first_block,
                  Grouping grouping, int64_t cta, LaunchPlan* plan) {
  const int nd = static_cast<int>(layout.dims.size());
  if (grouping == Grouping::none || plan->words_per_block != 1 || plan->word > 4 || nd < 1 ||
      nd > detail::StridedIndex::kMaxDims) {
    return;
  }
  const int64_t lanes = grouping == Grouping::unpack ? kTileLanes : 1;
  const strata::Stream& inner = layout.dims[0];
  const bool aligned = grouping == Grouping::unpack || reinterpret_cast<uintptr_t>(packed) % kGroupBytes == 0;
  // A pack group is always kGroupBytes; a tile of a short row may give
  // each lane fewer blocks (at least 2).
  const int64_t fewest = grouping == Grouping::unpack ? 2 : kGroupBytes / plan->word;
  for (int64_t g = kGroupBytes / plan->word; g >= fewest && plan->group == 1; g /= 2) {
    const int64_t run = g * lanes;
    if (inner.count % run == 0 && inner.stride >= -kGroupMaxStride && inner.stride <= kGroupMaxStride &&
        first_block % run == 0 && blocks % run == 0 && aligned && cta % lanes == 0) {
      plan->group = static_cast<int>(run);
      plan->lanes = static_cast<int>(lanes);
    }
  }
}

// Block shape: x threads over the words of a block (a power of two), y
// blocks per CTA.
void set_threads(int64_t cta, LaunchPlan* plan) {
  int64_t cap_x = 1;
  while (cap_x * 2 <= std::min<int64_t>(kMaxThreadsX, cta)) cap_x *= 2;
  const int64_t x = std::min(next_pow2(plan->words_per_block), cap_x);
  const int64_t y = std::max<int64_t>(1, cta / x);
  plan->threads[0] = static_cast<int>(x);
  plan->threads[1] = static_cast<int>(y);
  plan->threads[2] = 1;
}

// Launches: dimensions beyond kMaxDims are looped over on the host, one
// launch per sub-block of the inner kMaxDims dimensions. Returns the blocks
// of one launch.
int64_t set_launches(const StridedBlock& layout, int64_t blocks, LaunchPlan* plan) {
  if (static_cast<int>(layout.dims.size()) <= detail::StridedIndex::kMaxDims) {
    plan->launches = blocks > 0 ? 1 : 0;
    return blocks;
  }
  int64_t sub = 1;
  for (int d = 0; d < detail::StridedIndex::kMaxDims; ++d) sub *= std::max<int64_t>(1, layout.dims[d].count);
  plan->launches = blocks > 0 ? static_cast<int>(std::min<int64_t>(ceil_div(blocks, sub), INT32_MAX)) : 0;
  return std::min(blocks, sub);
}

// Grid: one CTA row per item, capped to what the device holds at once
// (and to its limit); the kernels stride over the rest.
void set_grid(const DeviceProperties& props, int64_t per_launch, LaunchPlan* plan) {
  const int64_t x = plan->threads[0], y = plan->threads[1];
  const int64_t segments = ceil_div(plan->words_per_block, x);
  const int64_t units = per_launch / plan->group;  // blocks, or runs of them
  const int64_t items = units > INT64_MAX / segments ? INT64_MAX : units * segments;
  const int64_t per_cta = y / plan->lanes;  // items of a CTA
  int64_t cap =
      props.sm_count > 0 ? props.sm_count * std::max<int64_t>(1, kResidentThreadsPerSm / (x * y)) : kFallbackMaxCtas;
  if (props.max_grid[0] > 0) cap = std::min(cap, props.max_grid[0]);
  plan->grid[0] = std::max<int64_t>(1, std::min(ceil_div(items, per_cta), cap));
  plan->grid[1] = 1;
  plan->grid[2] = 1;
}

}  // namespace

LaunchPlan plan_launch(const StridedBlock& layout, const void* base, const void* packed, int64_t blocks,
                       const DeviceProperties& props, int64_t first_block, Grouping grouping, int max_word) noexcept {
  LaunchPlan plan;
  plan.word = std::min(word_of(layout, base, packed), std::max(max_word, 1));
  if (layout.block <= 0) {
    plan.words_per_block = 0;
    plan.grid[0] = 0;
    plan.launches = 0;
    return plan;
  }
  plan.words_per_block = layout.block / plan.word;
  int64_t cta = kCtaThreads;
  if (props.max_threads_per_block > 0) cta = std::min<int64_t>(cta, props.max_threads_per_block);
  choose_group(layout, packed, blocks, first_block, grouping, cta, &plan);
  set_threads(cta, &plan);
  const int64_t per_launch = set_launches(layout, blocks, &plan);
  if (blocks <= 0) {
    plan.grid[0] = 0;
    return plan;
  }
  set_grid(props, per_launch, &plan);
  return plan;
}

}  // namespace strata::gpu
