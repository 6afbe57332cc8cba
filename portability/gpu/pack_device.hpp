// Device pack/unpack of a canonical strided block: the launch plan and the
// launchers. The kernel body is written once (pack_kernels.cu, through
// portability/setup/host_device.hpp and the shared index math of
// portability/layout/strided_index.hpp) and compiles with nvcc and hipcc.
#pragma once

#include <strata/layout.hpp>
#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"

#include <cstdint>

namespace strata::gpu {

// How a (layout, pointers) pair is launched.
struct LaunchPlan {
  int word = 1;  // bytes moved per thread step: 1, 2, 4, 8 or 16
  int64_t words_per_block = 0;
  // Blocks of one word of 1-4 bytes close together move in runs of
  // consecutive blocks of the innermost dimension (plan_launch says when).
  // group: blocks per item (1 when not); lanes: threads per item. A pack
  // group is kGroupBytes / word blocks, one thread, one packed word of
  // kGroupBytes; an unpack tile is kTileLanes threads of kGroupBytes / word
  // blocks each (2 or 4 where rows are too short for that), lane l taking
  // blocks l, l + kTileLanes, ... of the tile.
  int group = 1;
  int lanes = 1;
  int threads[3] = {1, 1, 1};   // block shape (x: words of a block, y: blocks)
  int64_t grid[3] = {1, 1, 1};  // grid shape, within the device's limits
  int launches = 1;             // > 1 when the outer dimensions are split on the host
};

// Bytes of a group's packed word, threads of an unpack tile, and the
// largest innermost stride (bytes, either sign) at which narrow blocks are
// grouped.
constexpr int kGroupBytes = 8;
constexpr int kTileLanes = 32;
constexpr int64_t kGroupMaxStride = 64;

// Which runs of narrow blocks a plan may use.
enum class Grouping { none, pack, unpack };

// The largest word that divides the block length, every block's start in
// `base` (offset and all strides) and the packed pointer; the block shape
// from the block length and counts; the grid capped by the device limits
// (the kernels stride over whatever the grid does not cover). `blocks`
// blocks from block `first_block` on are moved. Blocks of one word of 1, 2
// or 4 bytes at an innermost stride of at most kGroupMaxStride move in pack
// groups (Grouping::pack) or unpack tiles (Grouping::unpack) when the
// innermost count, `first_block` and `blocks` are whole runs (and, for
// packs, the packed pointer is aligned to kGroupBytes). `max_word` (a power
// of two) caps the word: a batch moves small layouts of different words in
// one launch, in the smallest of their words (pack_kernels.cu).
LaunchPlan plan_launch(const StridedBlock& layout, const void* base, const void* packed, int64_t blocks,
                       const DeviceProperties& props, int64_t first_block = 0, Grouping grouping = Grouping::pack,
                       int max_word = 16) noexcept;

// Packs blocks [block_begin, block_end) (end -1: all) asynchronously on
// `stream`; see strata::device::pack.
Status pack_async(const StridedBlock& layout, const void* base, void* packed, Stream stream, int64_t block_begin = 0,
                  int64_t block_end = -1) noexcept;
Status unpack_async(const StridedBlock& layout, const void* packed, void* base, Stream stream, int64_t block_begin = 0,
                    int64_t block_end = -1) noexcept;

// One layout's share of a batch: blocks [block_begin, block_end) (end -1:
// all) between `user` (the layout's base) and `packed`.
struct PackJob {
  const StridedBlock* layout = nullptr;
  char* user = nullptr;
  char* packed = nullptr;
  int64_t block_begin = 0;
  int64_t block_end = -1;
};

// Packs (unpacks) every job asynchronously on `stream` with as few launches
// as the jobs allow: layouts of up to 4 dimensions that share a word size
// go 16 to a launch (a launch costs microseconds of host time; a halo
// exchange has dozens of small faces). Jobs must not write the same bytes.
Status pack_batch_async(const PackJob* jobs, size_t count, Stream stream) noexcept;
Status unpack_batch_async(const PackJob* jobs, size_t count, Stream stream) noexcept;

}  // namespace strata::gpu
