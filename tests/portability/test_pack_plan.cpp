// The launch plan of the device pack kernels (portability/gpu/pack_plan.cpp),
// host only: the word size against a brute-force alignment of every block
// start, the block shape and grid within the device's limits, and the
// host-side split of layouts with more dimensions than a kernel takes.
//
// Replay a failing randomized run with STRATA_TEST_SEED=<seed> (printed in
// the failure message); STRATA_TEST_ITERATIONS changes the number of cases.
#include <strata/layout.hpp>

#include "portability/gpu/pack_device.hpp"
#include "portability/layout/strided_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using strata::Stream;
using strata::StridedBlock;
using strata::gpu::DeviceProperties;
using strata::gpu::Grouping;
using strata::gpu::LaunchPlan;
using strata::gpu::plan_launch;

constexpr int kMaxDims = strata::detail::StridedIndex::kMaxDims;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

DeviceProperties h200() {
  DeviceProperties p;
  p.name = "test H200";
  p.sm_count = 132;
  p.warp_size = 32;
  p.max_threads_per_block = 1024;
  p.max_grid[0] = 2147483647;
  p.max_grid[1] = 65535;
  p.max_grid[2] = 65535;
  return p;
}

DeviceProperties mi250x_gcd() {
  DeviceProperties p;
  p.name = "test MI250X GCD";
  p.sm_count = 110;
  p.warp_size = 64;
  p.max_threads_per_block = 1024;
  p.max_grid[0] = 2147483647;
  p.max_grid[1] = 2147483647;
  p.max_grid[2] = 2147483647;
  return p;
}

// An address with the given residue modulo 64 (no memory behind it).
const void* addr(uintptr_t residue) { return reinterpret_cast<const void*>(uintptr_t{0x7f0000000000} + residue); }

bool divides(int64_t w, uint64_t v) { return v % static_cast<uint64_t>(w) == 0; }

// The start address of every block, by a plain odometer (small layouts).
std::vector<uint64_t> block_starts(const StridedBlock& b, const void* base) {
  std::vector<uint64_t> out;
  const size_t nd = b.dims.size();
  std::vector<int64_t> idx(nd, 0);
  const int64_t n = b.block_count();
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = b.offset;
    for (size_t d = 0; d < nd; ++d) off += idx[d] * b.dims[d].stride;
    out.push_back(reinterpret_cast<uintptr_t>(base) + static_cast<uint64_t>(off));
    for (size_t d = 0; d < nd; ++d) {
      if (++idx[d] < b.dims[d].count) break;
      idx[d] = 0;
    }
  }
  return out;
}

// The word the plan must choose: the largest of 16, 8, 4, 2, 1 dividing the
// block length, the packed pointer and every block start.
int brute_force_word(const StridedBlock& b, const void* base, const void* packed) {
  const std::vector<uint64_t> starts = block_starts(b, base);
  for (int w : {16, 8, 4, 2}) {
    bool ok = divides(w, static_cast<uint64_t>(b.block)) && divides(w, reinterpret_cast<uintptr_t>(packed));
    for (uint64_t s : starts) ok = ok && divides(w, s);
    if (ok) return w;
  }
  return 1;
}

// Shape and grid invariants of any plan.
void expect_valid(const LaunchPlan& p, const StridedBlock& b, int64_t blocks, const DeviceProperties& props) {
  SCOPED_TRACE(b.to_string() + " blocks " + std::to_string(blocks));
  ASSERT_TRUE(p.word == 1 || p.word == 2 || p.word == 4 || p.word == 8 || p.word == 16) << p.word;
  ASSERT_GT(b.block, 0);
  EXPECT_EQ(p.words_per_block * p.word, b.block);
  const int x = p.threads[0], y = p.threads[1];
  EXPECT_GE(x, 1);
  EXPECT_EQ(x & (x - 1), 0) << "threads.x must be a power of two: " << x;
  EXPECT_LE(x, 256);
  const int cap = std::min(256, props.max_threads_per_block);
  EXPECT_TRUE(x >= p.words_per_block || x == cap) << "x " << x << " words " << p.words_per_block;
  EXPECT_LT(x / 2, std::max<int64_t>(1, p.words_per_block)) << "x larger than needed";
  EXPECT_GE(y, 1);
  EXPECT_EQ(p.threads[2], 1);
  EXPECT_LE(int64_t{x} * y, 256);
  EXPECT_LE(int64_t{x} * y, props.max_threads_per_block);
  EXPECT_EQ(int64_t{x} * y, std::min(256, props.max_threads_per_block)) << "CTA not filled";
  if (p.group != 1) {  // runs of narrow blocks: at most kGroupBytes per thread of the run
    EXPECT_TRUE(p.lanes == 1 || p.lanes == strata::gpu::kTileLanes) << p.lanes;
    EXPECT_EQ(p.group % p.lanes, 0);
    const int per_lane = p.group / p.lanes;  // a pack group: exactly kGroupBytes; a tile's lane: 2 blocks or more
    EXPECT_EQ(per_lane & (per_lane - 1), 0) << per_lane;
    EXPECT_GE(per_lane, 2);
    if (p.lanes == 1) {
      EXPECT_EQ(per_lane * p.word, strata::gpu::kGroupBytes);
    }
    EXPECT_LE(per_lane * p.word, strata::gpu::kGroupBytes);
    EXPECT_EQ(y % p.lanes, 0);
    EXPECT_EQ(p.words_per_block, 1);
    ASSERT_FALSE(b.dims.empty());
    EXPECT_LE(static_cast<int>(b.dims.size()), kMaxDims);
    EXPECT_EQ(b.dims[0].count % p.group, 0);
    EXPECT_LE(std::abs(b.dims[0].stride), strata::gpu::kGroupMaxStride);
    EXPECT_EQ(blocks % p.group, 0);
  } else {
    EXPECT_EQ(p.lanes, 1);
  }
  if (blocks <= 0) {
    EXPECT_EQ(p.launches, 0);
    return;
  }
  EXPECT_GE(p.grid[0], 1);
  EXPECT_EQ(p.grid[1], 1);
  EXPECT_EQ(p.grid[2], 1);
  EXPECT_LE(p.grid[0], props.max_grid[0]);
  if (props.sm_count > 0) {
    EXPECT_LE(p.grid[0], int64_t{props.sm_count} * 2048 / (int64_t{x} * y)) << "more than one resident wave";
  }
  // Small jobs are covered by the grid without striding: one item per row.
  int64_t per_launch = blocks;
  if (static_cast<int>(b.dims.size()) > kMaxDims) {
    int64_t sub = 1;
    for (int d = 0; d < kMaxDims; ++d) sub *= b.dims[static_cast<size_t>(d)].count;
    per_launch = std::min(blocks, sub);
  }
  const int64_t segments = (p.words_per_block + x - 1) / x;
  const int64_t items = per_launch / p.group * segments;
  const int64_t per_cta = y / p.lanes;
  const int64_t rows_needed = (items + per_cta - 1) / per_cta;
  if (props.sm_count > 0 && rows_needed <= int64_t{props.sm_count} * 2048 / (int64_t{x} * y)) {
    EXPECT_EQ(p.grid[0], rows_needed);
  }
}

TEST(PackPlan, WordFollowsBlockLengthAndAlignment) {
  const DeviceProperties props = h200();
  struct Case {
    int64_t block;
    uintptr_t base, packed;
    int64_t offset;
    std::vector<Stream> dims;
    int word;
  };
  const std::vector<Case> cases = {
      {16, 0, 0, 0, {{100, 512}}, 16},
      {24, 0, 0, 0, {{100, 512}}, 8},  // 24-B blocks, 8-B aligned: 3 words of 8
      {24, 8, 0, 0, {{100, 512}}, 8},
      {24, 4, 0, 0, {{100, 512}}, 4},
      {32, 0, 8, 0, {{100, 512}}, 8},   // packed pointer 8-B aligned
      {32, 0, 0, 0, {{100, 520}}, 8},   // stride 8-B aligned
      {32, 0, 0, 0, {{100, -520}}, 8},  // negative stride
      {32, 0, 0, 0, {{100, -512}}, 16},
      {32, 0, 0, 2, {{100, 512}}, 2},     // offset
      {32, 0, 0, -16, {{100, 512}}, 16},  // negative offset
      {64, 0, 0, 0, {{4, 0}}, 16},        // zero stride adds nothing
      {64, 0, 0, 0, {{4, 512}, {3, 0}}, 16},
      {64, 0, 0, 0, {{4, 512}, {3, 1}}, 1},
      {1, 0, 0, 0, {{100, 512}}, 1},
      {3, 0, 0, 0, {{100, 512}}, 1},
      {2, 0, 0, 0, {{100, 512}}, 2},
      {6, 0, 0, 0, {{100, 512}}, 2},
      {12, 0, 0, 0, {{100, 512}}, 4},
      {48, 0, 0, 0, {{100, 1024}}, 16},
      {4096, 0, 0, 0, {}, 16},  // contiguous
      {4097, 0, 0, 0, {}, 1},
      {4096, 15, 0, 0, {}, 1},  // misaligned contiguous
      {8, 0, 0, 0, {{2, 1 << 20}, {3, 24}, {5, -40}}, 8},
  };
  for (const Case& c : cases) {
    StridedBlock b;
    b.offset = c.offset;
    b.block = c.block;
    b.dims = c.dims;
    const LaunchPlan p = plan_launch(b, addr(c.base), addr(c.packed), b.block_count(), props);
    EXPECT_EQ(p.word, c.word) << b.to_string() << " base+" << c.base << " packed+" << c.packed;
    EXPECT_EQ(p.word, brute_force_word(b, addr(c.base), addr(c.packed))) << b.to_string();
    expect_valid(p, b, b.block_count(), props);
  }
}

// A batch moves small layouts of different words in one launch, in the
// smallest of their words (pack_kernels.cu): a capped plan takes the
// smaller of its own word and the cap, and stays a valid plan of the same
// blocks (each word a divisor of the block and of every start).
TEST(PackPlan, MaxWordCapsTheWord) {
  const DeviceProperties props = h200();
  const std::vector<std::pair<int64_t, std::vector<Stream>>> layouts = {
      {16, {{100, 512}}}, {24, {{100, 512}}}, {1536, {{64, 4096}, {3, 512 * 64}}}, {48, {{100, 1024}}}, {4096, {}}};
  for (const auto& [block, dims] : layouts) {
    StridedBlock b;
    b.block = block;
    b.dims = dims;
    const int natural = plan_launch(b, addr(0), addr(0), b.block_count(), props).word;
    for (int cap : {16, 8, 4, 2, 1}) {
      const LaunchPlan p = plan_launch(b, addr(0), addr(0), b.block_count(), props, 0, Grouping::none, cap);
      EXPECT_EQ(p.word, std::min(natural, cap)) << b.to_string() << " cap " << cap;
      EXPECT_EQ(p.words_per_block * p.word, block) << b.to_string() << " cap " << cap;
      expect_valid(p, b, b.block_count(), props);
    }
  }
}

TEST(PackPlan, RandomLayoutsMatchBruteForce) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0xD1CEu);
  const int iterations = static_cast<int>(env_u64("STRATA_TEST_ITERATIONS", 20000));
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int per_word[17] = {};
  for (int it = 0; it < iterations; ++it) {
    SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed) + " (case " + std::to_string(it) + ")");
    const int64_t align = int64_t{1} << pick(0, 5);  // 1..32
    StridedBlock b;
    b.block = pick(0, 3) == 0 ? pick(1, 600) : align * pick(1, 40);
    b.offset = pick(0, 2) == 0 ? pick(-100, 100) : align * pick(-10, 10);
    const int nd = static_cast<int>(pick(0, 4));
    for (int d = 0; d < nd; ++d) {
      Stream s;
      s.count = pick(1, 6);
      switch (pick(0, 4)) {
        case 0: s.stride = 0; break;
        case 1: s.stride = pick(-700, 700); break;
        default: s.stride = align * pick(-64, 64); break;
      }
      b.dims.push_back(s);
    }
    const void* base = addr(static_cast<uintptr_t>(pick(0, 3) == 0 ? pick(0, 63) : align * pick(0, 4)));
    const void* packed = addr(static_cast<uintptr_t>(pick(0, 3) == 0 ? pick(0, 63) : 16 * pick(0, 4)));
    const int64_t n = b.block_count();
    const int64_t blocks = pick(0, 4) == 0 ? pick(0, n) : n;
    const DeviceProperties props = pick(0, 1) ? h200() : mi250x_gcd();
    const LaunchPlan p = plan_launch(b, base, packed, blocks, props);
    ASSERT_EQ(p.word, brute_force_word(b, base, packed)) << b.to_string();
    ++per_word[p.word];
    expect_valid(p, b, blocks, props);
    if (testing::Test::HasFailure()) break;
  }
  if (iterations >= 1000) {
    for (int w : {1, 2, 4, 8, 16}) EXPECT_GT(per_word[w], iterations / 50) << "word " << w << " rarely chosen";
  }
}

// Runs of narrow blocks (pack groups, unpack tiles): exactly when the
// block is one word of 1, 2 or 4 bytes, the innermost stride is within kGroupMaxStride, the innermost
// count, the range's first block and length are whole groups, the packed
// pointer is aligned to a group's word, and the kernel takes every
// dimension.
TEST(PackPlan, GroupsOfNarrowBlocks) {
  const DeviceProperties props = h200();
  struct Case {
    int64_t block, offset;
    std::vector<Stream> dims;
    int64_t first, blocks;  // blocks -1: all
    uintptr_t packed;
    Grouping grouping;
    int group;
  };
  constexpr Grouping kPack = Grouping::pack;
  const std::vector<Case> cases = {
      {1, 0, {{4096, 2}}, 0, -1, 0, kPack, 8},
      {1, 0, {{4096, 2}}, 0, -1, 0, Grouping::none, 1},  // groups switched off
      {1, 0, {{4096, 64}}, 0, -1, 0, kPack, 8},
      {1, 0, {{4096, -64}}, 0, -1, 0, kPack, 8},
      {1, 0, {{4096, 65}}, 0, -1, 0, kPack, 1},  // stride beyond kGroupMaxStride
      {1, 0, {{4096, 0}}, 0, -1, 0, kPack, 8},
      {1, 0, {{4092, 2}}, 0, -1, 0, kPack, 1},  // rows of 4092: a group would straddle two
      {1, 0, {{4096, 2}}, 8, 4000, 0, kPack, 8},
      {1, 0, {{4096, 2}}, 4, 4000, 0, kPack, 1},  // range starts inside a group
      {1, 0, {{4096, 2}}, 8, 4004, 0, kPack, 1},  // range ends inside a group
      {1, 0, {{4096, 2}}, 0, -1, 4, kPack, 1},    // packed pointer not 8-byte aligned
      {1, 0, {{4096, 2}}, 0, -1, 8, kPack, 8},
      {2, 0, {{4096, 4}}, 0, -1, 0, kPack, 4},
      {2, 0, {{4096, 4}}, 4, 4000, 0, kPack, 4},
      {2, 1, {{4096, 4}}, 0, -1, 0, kPack, 1},  // odd start: 1-byte words, two per block
      {4, 0, {{4096, 8}}, 0, -1, 0, kPack, 2},
      {4, 0, {{4096, -12}}, 2, 4000, 0, kPack, 2},
      {4, 0, {{4096, 8}}, 1, 4000, 0, kPack, 1},
      {4, 2, {{4096, 8}}, 0, -1, 0, kPack, 1},   // 2-byte aligned: two words per block
      {8, 0, {{4096, 16}}, 0, -1, 0, kPack, 1},  // 8-byte blocks are a group's size already
      {3, 0, {{4096, 4}}, 0, -1, 0, kPack, 1},
      {1, 0, {{8, 2}, {100, 1000}, {7, 300000}}, 0, -1, 0, kPack, 8},
      {1, 0, {}, 0, -1, 0, kPack, 1},  // one block
      // Unpack tiles: 32 lanes x 8 / word blocks, any packed alignment.
      {1, 0, {{4096, 2}}, 0, -1, 4, Grouping::unpack, 256},
      {1, 0, {{4096, -64}}, 256, 2048, 0, Grouping::unpack, 256},
      {1, 0, {{4096, 2}}, 8, 4000, 0, Grouping::unpack, 1},            // not whole tiles
      {1, 0, {{2000, 2}}, 0, -1, 0, Grouping::unpack, 1},              // rows of 2000: every tile would straddle two
      {1, 0, {{64, 2}, {100, 1000}}, 0, -1, 0, Grouping::unpack, 64},  // short rows: 2 blocks a lane
      {1, 0, {{128, 3}, {100, 1000}}, 128, 1280, 0, Grouping::unpack, 128},
      {1, 0, {{64, 2}, {100, 1000}}, 32, 64, 0, Grouping::unpack, 1},
      {2, 0, {{64, 4}, {100, 1000}}, 0, -1, 0, Grouping::unpack, 64},
      {1, 0, {{64, 2}, {100, 1000}}, 0, -1, 0, kPack, 8},  // packs: always 8 bytes a thread
      {2, 0, {{4096, 4}}, 128, 3968, 0, Grouping::unpack, 128},
      {4, 0, {{4096, 8}}, 0, -1, 0, Grouping::unpack, 64},
      {4, 0, {{4096, 80}}, 0, -1, 0, Grouping::unpack, 1},
      {8, 0, {{4096, 16}}, 0, -1, 0, Grouping::unpack, 1},
  };
  for (const Case& c : cases) {
    StridedBlock b;
    b.block = c.block;
    b.offset = c.offset;
    b.dims = c.dims;
    const int64_t blocks = c.blocks < 0 ? b.block_count() - c.first : c.blocks;
    const LaunchPlan p = plan_launch(b, addr(0), addr(c.packed), blocks, props, c.first, c.grouping);
    EXPECT_EQ(p.group, c.group) << b.to_string() << " first " << c.first << " blocks " << blocks << " packed+"
                                << c.packed << " grouping " << static_cast<int>(c.grouping);
    EXPECT_EQ(p.lanes, c.grouping == Grouping::unpack && c.group > 1 ? 32 : 1);
    expect_valid(p, b, blocks, props);
    if (p.group > 1) {
      const int64_t per_cta = p.threads[1] / p.lanes;
      const int64_t rows = (blocks / p.group + per_cta - 1) / per_cta;
      EXPECT_EQ(p.grid[0], std::min<int64_t>(rows, int64_t{props.sm_count} * 8)) << "one CTA row per group";
    }
  }
  // More dimensions than a kernel takes: the host splits them, no groups.
  StridedBlock deep;
  deep.block = 1;
  for (int d = 0; d <= kMaxDims; ++d) deep.dims.push_back({8, d == 0 ? 2 : int64_t{16} << d});
  EXPECT_EQ(plan_launch(deep, addr(0), addr(0), deep.block_count(), props).group, 1);
}

TEST(PackPlan, BlockShapes) {
  const DeviceProperties props = h200();
  struct Case {
    int64_t block;
    int x, y;
  };
  // Aligned blocks, 16-B words where the length allows.
  const std::vector<Case> cases = {
      {1, 1, 256}, {4, 1, 256},  {8, 1, 256},   {16, 1, 256}, {24, 4, 64},    {32, 2, 128},   {48, 4, 64},
      {64, 4, 64}, {128, 8, 32}, {256, 16, 16}, {512, 32, 8}, {4096, 256, 1}, {8192, 256, 1}, {1 << 20, 256, 1},
  };
  for (const Case& c : cases) {
    StridedBlock b;
    b.block = c.block;
    b.dims = {{1000, 2 * ((c.block + 15) / 16) * 16}};
    const LaunchPlan p = plan_launch(b, addr(0), addr(0), b.block_count(), props);
    EXPECT_EQ(p.threads[0], c.x) << b.to_string();
    EXPECT_EQ(p.threads[1], c.y) << b.to_string();
    expect_valid(p, b, b.block_count(), props);
  }
  // A device that takes fewer threads per CTA.
  DeviceProperties small = props;
  small.max_threads_per_block = 64;
  StridedBlock b;
  b.block = 8192;
  b.dims = {{10, 16384}};
  LaunchPlan p = plan_launch(b, addr(0), addr(0), 10, small);
  EXPECT_EQ(p.threads[0], 64);
  EXPECT_EQ(p.threads[1], 1);
  expect_valid(p, b, 10, small);
  b.block = 4;
  p = plan_launch(b, addr(0), addr(0), 10, small);
  EXPECT_EQ(p.threads[0], 1);
  EXPECT_EQ(p.threads[1], 64);
}

TEST(PackPlan, GridWithinLimits) {
  DeviceProperties props = h200();
  StridedBlock b;
  b.block = 4;
  b.dims = {{int64_t{1} << 26, 8}};  // 64M blocks: far beyond one wave
  LaunchPlan p = plan_launch(b, addr(0), addr(0), b.block_count(), props);
  EXPECT_EQ(p.grid[0], 132 * 8) << "one resident wave of 8 CTAs per multiprocessor";
  expect_valid(p, b, b.block_count(), props);

  // A few blocks: one row of the CTA per block (per group of two 4-byte
  // blocks when grouped), no more CTAs than needed.
  p = plan_launch(b, addr(0), addr(0), 300, props, 0, Grouping::none);
  EXPECT_EQ(p.grid[0], 2);
  p = plan_launch(b, addr(0), addr(0), 600, props);
  EXPECT_EQ(p.group, 2);
  EXPECT_EQ(p.grid[0], 2);
  p = plan_launch(b, addr(0), addr(0), 1, props);
  EXPECT_EQ(p.grid[0], 1);

  // A contiguous 256 MiB block: segments of 256 words over the whole grid.
  StridedBlock dense;
  dense.block = int64_t{256} << 20;
  p = plan_launch(dense, addr(0), addr(0), 1, props);
  EXPECT_EQ(p.word, 16);
  EXPECT_EQ(p.threads[0], 256);
  EXPECT_EQ(p.grid[0], 132 * 8);
  expect_valid(p, dense, 1, props);

  // The device's own grid limit wins.
  props.max_grid[0] = 100;
  p = plan_launch(b, addr(0), addr(0), b.block_count(), props);
  EXPECT_EQ(p.grid[0], 100);
  // Unknown multiprocessor count: a fixed cap, still within the limit.
  props = h200();
  props.sm_count = 0;
  p = plan_launch(b, addr(0), addr(0), b.block_count(), props);
  EXPECT_GE(p.grid[0], 1);
  EXPECT_LE(p.grid[0], props.max_grid[0]);
}

TEST(PackPlan, EmptyAndZeroBlocks) {
  const DeviceProperties props = h200();
  StridedBlock empty;
  LaunchPlan p = plan_launch(empty, addr(0), addr(0), 0, props);
  EXPECT_EQ(p.launches, 0);
  EXPECT_EQ(p.words_per_block, 0);
  StridedBlock b;
  b.block = 8;
  b.dims = {{10, 64}};
  p = plan_launch(b, addr(0), addr(0), 0, props);
  EXPECT_EQ(p.launches, 0);
  EXPECT_EQ(p.grid[0], 0);
  EXPECT_EQ(p.word, 8);
}

TEST(PackPlan, MoreDimensionsThanAKernelTakes) {
  const DeviceProperties props = h200();
  StridedBlock b;
  b.block = 4;
  int64_t stride = 8;
  for (int d = 0; d < kMaxDims + 2; ++d) {
    b.dims.push_back({2, stride});
    stride = stride * 2 + 8;  // never foldable or flattenable
  }
  const int64_t n = b.block_count();
  ASSERT_EQ(n, int64_t{1} << (kMaxDims + 2));
  LaunchPlan p = plan_launch(b, addr(0), addr(0), n, props);
  EXPECT_EQ(p.launches, 4) << "one launch per sub-block of the inner kMaxDims dimensions";
  expect_valid(p, b, n, props);
  p = plan_launch(b, addr(0), addr(0), (int64_t{1} << kMaxDims) + 1, props);
  EXPECT_EQ(p.launches, 2);
  p = plan_launch(b, addr(0), addr(0), 5, props);
  EXPECT_EQ(p.launches, 1);

  b.dims.resize(kMaxDims);
  p = plan_launch(b, addr(0), addr(0), b.block_count(), props);
  EXPECT_EQ(p.launches, 1) << "exactly kMaxDims dimensions fit one launch";
}

}  // namespace
