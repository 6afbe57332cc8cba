// The canonical layout engine (strata/layout.hpp) without MPI: each
// simplification pass on hand-made IRs, the fixed point, repeat(), the byte
// bounds, and a seeded randomized comparison of pack_host/unpack_host against
// a naive oracle that walks the unsimplified IR with nested loops.
//
// Replay a failing randomized run with STRATA_TEST_SEED=<seed> (printed in
// the failure message); STRATA_TEST_ITERATIONS changes the number of cases.
#include <strata/layout.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace strata {
// Readable GoogleTest output for blocks.
void PrintTo(const StridedBlock& b, std::ostream* os) { *os << b.to_string(); }
}  // namespace strata

namespace {

using strata::canonicalize;
using strata::LayoutIR;
using strata::Stream;
using strata::StridedBlock;

// ---------------------------------------------------------------------------
// Helpers

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

std::string ir_string(const LayoutIR& ir) {
  std::ostringstream os;
  os << "IR{offset=" << ir.offset << " dense=" << ir.dense_bytes << " streams(inner first)=[";
  for (size_t i = 0; i < ir.streams.size(); ++i) {
    os << (i ? " " : "") << ir.streams[i].count << "x" << ir.streams[i].stride;
  }
  os << "]}";
  return os.str();
}

bool same_ir(const LayoutIR& a, const LayoutIR& b) {
  return a.offset == b.offset && a.dense_bytes == b.dense_bytes && a.streams == b.streams;
}

LayoutIR ir_of(const StridedBlock& b) { return LayoutIR{b.offset, b.block, b.dims}; }

// The oracle: every byte address of the IR, in MPI's pack order, by plain
// nested loops over the streams (outermost first), written independently of
// the engine.
void walk(const LayoutIR& ir, int level, int64_t base, std::vector<int64_t>& out) {
  if (level < 0) {
    for (int64_t j = 0; j < ir.dense_bytes; ++j) out.push_back(base + j);
    return;
  }
  const Stream& s = ir.streams[static_cast<size_t>(level)];
  for (int64_t i = 0; i < s.count; ++i) walk(ir, level - 1, base + i * s.stride, out);
}

std::vector<int64_t> oracle(const LayoutIR& ir) {
  std::vector<int64_t> out;
  walk(ir, static_cast<int>(ir.streams.size()) - 1, ir.offset, out);
  return out;
}

std::vector<int64_t> oracle(const StridedBlock& b) { return oracle(ir_of(b)); }

bool duplicate_free(std::vector<int64_t> addrs) {
  std::sort(addrs.begin(), addrs.end());
  return std::adjacent_find(addrs.begin(), addrs.end()) == addrs.end();
}

// "" when equal, else where the first difference is.
std::string first_difference(const std::vector<unsigned char>& want, const std::vector<unsigned char>& got,
                             size_t guard) {
  if (want.size() != got.size()) return "size differs";
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      std::ostringstream os;
      os << "first difference at buffer index " << i << " (" << static_cast<int64_t>(i) - static_cast<int64_t>(guard)
         << " relative to the guarded region): want " << int(want[i]) << ", got " << int(got[i]);
      return os.str();
    }
  }
  return "";
}

// Sanity: the canonical form really is simplified.
void expect_canonical(const StridedBlock& b) {
  if (b.packed_bytes() == 0) {
    EXPECT_EQ(b.offset, 0);
    EXPECT_EQ(b.block, 0);
    EXPECT_TRUE(b.dims.empty());
    return;
  }
  for (const Stream& d : b.dims) EXPECT_GT(d.count, 1) << b.to_string();
  if (!b.dims.empty()) {
    EXPECT_NE(b.dims.front().stride, b.block) << "foldable: " << b.to_string();
  }
  for (size_t i = 0; i + 1 < b.dims.size(); ++i) {
    EXPECT_NE(b.dims[i].count * b.dims[i].stride, b.dims[i + 1].stride) << "flattenable: " << b.to_string();
  }
}

// ---------------------------------------------------------------------------
// Each pass on hand-made IRs

TEST(LayoutPasses, CollapseEmpty) {
  LayoutIR zero_count{16, 4, {{3, 8}, {0, 100}, {2, 1000}}};
  EXPECT_TRUE(strata::pass::collapse_empty(zero_count));
  EXPECT_TRUE(same_ir(zero_count, LayoutIR{})) << ir_string(zero_count);

  LayoutIR zero_dense{-8, 0, {{3, 8}}};
  EXPECT_TRUE(strata::pass::collapse_empty(zero_dense));
  EXPECT_TRUE(same_ir(zero_dense, LayoutIR{})) << ir_string(zero_dense);

  LayoutIR already{};
  EXPECT_FALSE(strata::pass::collapse_empty(already));

  LayoutIR nonempty{4, 4, {{2, 8}}};
  EXPECT_FALSE(strata::pass::collapse_empty(nonempty));
  EXPECT_TRUE(same_ir(nonempty, LayoutIR{4, 4, {{2, 8}}}));
}

TEST(LayoutPasses, DropUnitStreams) {
  LayoutIR ir{0, 4, {{1, 100}, {3, 8}, {1, -5}, {2, 64}, {1, 0}}};
  EXPECT_TRUE(strata::pass::drop_unit_streams(ir));
  EXPECT_TRUE(same_ir(ir, LayoutIR{0, 4, {{3, 8}, {2, 64}}})) << ir_string(ir);
  EXPECT_FALSE(strata::pass::drop_unit_streams(ir));

  LayoutIR only_units{12, 4, {{1, 7}, {1, 9}}};
  EXPECT_TRUE(strata::pass::drop_unit_streams(only_units));
  EXPECT_TRUE(same_ir(only_units, LayoutIR{12, 4, {}})) << ir_string(only_units);
}

TEST(LayoutPasses, FoldStreamIntoDense) {
  LayoutIR ir{0, 4, {{3, 4}, {2, 100}}};
  EXPECT_TRUE(strata::pass::fold_stream_into_dense(ir));
  EXPECT_TRUE(same_ir(ir, LayoutIR{0, 12, {{2, 100}}})) << ir_string(ir);

  // Repeated folding: 4 -> 12 -> 24.
  LayoutIR chain{5, 4, {{3, 4}, {2, 12}, {7, 100}}};
  EXPECT_TRUE(strata::pass::fold_stream_into_dense(chain));
  EXPECT_TRUE(same_ir(chain, LayoutIR{5, 24, {{7, 100}}})) << ir_string(chain);

  // Only the innermost stream can fold; reversed or gapped strides cannot.
  LayoutIR outer_only{0, 4, {{2, 8}, {3, 4}}};
  EXPECT_FALSE(strata::pass::fold_stream_into_dense(outer_only));
  LayoutIR reversed{0, 4, {{3, -4}}};
  EXPECT_FALSE(strata::pass::fold_stream_into_dense(reversed));
  LayoutIR overlap{0, 4, {{3, 2}}};
  EXPECT_FALSE(strata::pass::fold_stream_into_dense(overlap));
  EXPECT_TRUE(same_ir(overlap, LayoutIR{0, 4, {{3, 2}}}));
}

TEST(LayoutPasses, FlattenNestedStreams) {
  LayoutIR ir{0, 4, {{3, 8}, {2, 24}}};
  EXPECT_TRUE(strata::pass::flatten_nested_streams(ir));
  EXPECT_TRUE(same_ir(ir, LayoutIR{0, 4, {{6, 8}}})) << ir_string(ir);

  LayoutIR three{0, 4, {{2, 8}, {3, 16}, {4, 48}}};
  EXPECT_TRUE(strata::pass::flatten_nested_streams(three));
  EXPECT_TRUE(same_ir(three, LayoutIR{0, 4, {{24, 8}}})) << ir_string(three);

  LayoutIR zero{0, 4, {{2, 0}, {3, 0}}};
  EXPECT_TRUE(strata::pass::flatten_nested_streams(zero));
  EXPECT_TRUE(same_ir(zero, LayoutIR{0, 4, {{6, 0}}})) << ir_string(zero);

  LayoutIR negative{0, 4, {{3, -8}, {2, -24}}};
  EXPECT_TRUE(strata::pass::flatten_nested_streams(negative));
  EXPECT_TRUE(same_ir(negative, LayoutIR{0, 4, {{6, -8}}})) << ir_string(negative);

  // Only the matching pair flattens; the middle one stays.
  LayoutIR partial{0, 4, {{2, 8}, {3, 100}, {2, 300}}};
  EXPECT_TRUE(strata::pass::flatten_nested_streams(partial));
  EXPECT_TRUE(same_ir(partial, LayoutIR{0, 4, {{2, 8}, {6, 100}}})) << ir_string(partial);

  LayoutIR no{0, 4, {{3, 8}, {2, 25}}};
  EXPECT_FALSE(strata::pass::flatten_nested_streams(no));
  // Reversed outer stride: not the same order.
  LayoutIR rev{0, 4, {{3, 8}, {2, -24}}};
  EXPECT_FALSE(strata::pass::flatten_nested_streams(rev));
}

TEST(LayoutPasses, OrderByStrideIsANoOp) {
  // Sorting by stride (TEMPI) would change the pack order; ours keeps it.
  LayoutIR ir{0, 4, {{3, 100}, {2, 8}}};
  const LayoutIR before = ir;
  EXPECT_FALSE(strata::pass::order_by_stride(ir));
  EXPECT_TRUE(same_ir(ir, before)) << ir_string(ir);
  LayoutIR neg{8, 2, {{4, -16}, {3, 2}, {2, 0}}};
  const LayoutIR neg_before = neg;
  EXPECT_FALSE(strata::pass::order_by_stride(neg));
  EXPECT_TRUE(same_ir(neg, neg_before));
}

TEST(LayoutPasses, OverflowGuardsLeaveTheIrAlone) {
  // dense * count would overflow int64: no fold, and simplify terminates.
  const int64_t big = int64_t{1} << 40;
  LayoutIR fold{0, big, {{int64_t{1} << 30, big}}};
  EXPECT_FALSE(strata::pass::fold_stream_into_dense(fold));
  LayoutIR s = fold;
  strata::simplify(s);
  EXPECT_TRUE(same_ir(s, fold)) << ir_string(s);
  // inner.count * inner.stride overflows: no flatten.
  LayoutIR flat{0, 1, {{int64_t{1} << 40, int64_t{1} << 30}, {2, 0}}};
  EXPECT_FALSE(strata::pass::flatten_nested_streams(flat));
}

// ---------------------------------------------------------------------------
// simplify / canonicalize

TEST(LayoutSimplify, ReachesTheFixedPoint) {
  // bytes 0..23 built as 1 byte x4 x3 x2, with unit streams sprinkled in.
  LayoutIR ir{7, 1, {{1, 99}, {4, 1}, {3, 4}, {1, -3}, {2, 12}}};
  strata::simplify(ir);
  EXPECT_TRUE(same_ir(ir, LayoutIR{7, 24, {}})) << ir_string(ir);

  // Flatten first exposes a fold: {2x4}{3x8} -> {6x4} -> dense 24.
  LayoutIR ir2{0, 4, {{2, 4}, {3, 8}}};
  strata::simplify(ir2);
  EXPECT_TRUE(same_ir(ir2, LayoutIR{0, 24, {}})) << ir_string(ir2);

  // Vector of 4 blocks of 2 ints, stride 5 ints.
  LayoutIR vec{0, 4, {{2, 4}, {4, 20}}};
  strata::simplify(vec);
  EXPECT_TRUE(same_ir(vec, LayoutIR{0, 8, {{4, 20}}})) << ir_string(vec);

  // Running simplify again changes nothing, and no pass applies.
  LayoutIR again = vec;
  strata::simplify(again);
  EXPECT_TRUE(same_ir(again, vec));
  EXPECT_FALSE(strata::pass::collapse_empty(again));
  EXPECT_FALSE(strata::pass::drop_unit_streams(again));
  EXPECT_FALSE(strata::pass::fold_stream_into_dense(again));
  EXPECT_FALSE(strata::pass::flatten_nested_streams(again));
  EXPECT_FALSE(strata::pass::order_by_stride(again));

  // Empty anywhere makes it empty, whatever the offset.
  LayoutIR empty{100, 4, {{3, 8}, {0, 5}}};
  strata::simplify(empty);
  EXPECT_TRUE(same_ir(empty, LayoutIR{}));
}

TEST(LayoutSimplify, CanonicalizeKeepsTheExtent) {
  StridedBlock b = canonicalize(LayoutIR{4, 4, {{2, 4}, {4, 20}}}, 80);
  EXPECT_EQ(b.offset, 4);
  EXPECT_EQ(b.block, 8);
  ASSERT_EQ(b.dims.size(), 1u);
  EXPECT_EQ(b.dims[0], (Stream{4, 20}));
  EXPECT_EQ(b.extent, 80);
  EXPECT_EQ(b.block_count(), 4);
  EXPECT_EQ(b.packed_bytes(), 32);
  EXPECT_FALSE(b.contiguous());
  EXPECT_FALSE(b.empty());
  EXPECT_EQ(b.to_string(), "{offset=4 block=8 dims=[4x20] extent=80}");

  StridedBlock e = canonicalize(LayoutIR{9, 4, {{0, 4}}}, 16);
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.packed_bytes(), 0);
  EXPECT_EQ(e.extent, 16);
}

TEST(LayoutSimplify, SixtyFourBitStridesStayExact) {
  const int64_t s31 = (int64_t{1} << 31) + 8;
  const int64_t s32 = (int64_t{1} << 32) + 4;
  StridedBlock b = canonicalize(LayoutIR{0, 8, {{3, s31}, {2, 3 * s31}, {2, s32}}}, 0);
  ASSERT_EQ(b.dims.size(), 2u) << b.to_string();
  EXPECT_EQ(b.dims[0], (Stream{6, s31}));
  EXPECT_EQ(b.dims[1], (Stream{2, s32}));
  EXPECT_EQ(b.highest_byte(), 5 * s31 + s32 + 8);
}

// ---------------------------------------------------------------------------
// repeat, lowest_byte, highest_byte

TEST(LayoutRepeat, CountsOfElements) {
  StridedBlock vec{4, 8, {{3, 16}}, 48};
  StridedBlock two = strata::repeat(vec, 2);
  EXPECT_EQ(two, (StridedBlock{4, 8, {{6, 16}}, 96})) << two.to_string();

  EXPECT_EQ(strata::repeat(vec, 1), vec);

  StridedBlock none = strata::repeat(vec, 0);
  EXPECT_TRUE(none.empty()) << none.to_string();
  EXPECT_EQ(none.extent, 0);

  StridedBlock dense{0, 8, {}, 8};
  EXPECT_EQ(strata::repeat(dense, 5), (StridedBlock{0, 40, {}, 40}));

  StridedBlock padded{0, 8, {}, 12};
  EXPECT_EQ(strata::repeat(padded, 3), (StridedBlock{0, 8, {{3, 12}}, 36}));

  // Element with a non-matching extent: a new outer dimension.
  StridedBlock gapped{-4, 4, {{2, 8}}, 20};
  EXPECT_EQ(strata::repeat(gapped, 3), (StridedBlock{-4, 4, {{2, 8}, {3, 20}}, 60}));

  // Zero extent: the same bytes again.
  StridedBlock zero{0, 4, {}, 0};
  EXPECT_EQ(strata::repeat(zero, 3), (StridedBlock{0, 4, {{3, 0}}, 0}));
}

TEST(LayoutBounds, LowestAndHighestByte) {
  StridedBlock b{10, 4, {{3, -8}, {2, 100}}, 0};
  EXPECT_EQ(b.lowest_byte(), 10 - 16);
  EXPECT_EQ(b.highest_byte(), 10 + 4 + 100);
  StridedBlock c{-3, 5, {}, 0};
  EXPECT_EQ(c.lowest_byte(), -3);
  EXPECT_EQ(c.highest_byte(), 2);
  StridedBlock z{0, 2, {{4, 0}}, 0};
  EXPECT_EQ(z.lowest_byte(), 0);
  EXPECT_EQ(z.highest_byte(), 2);
  StridedBlock empty{};
  EXPECT_EQ(empty.lowest_byte(), 0);
  EXPECT_EQ(empty.highest_byte(), 0);
}

// ---------------------------------------------------------------------------
// Randomized: pack_host/unpack_host of the canonical block against the oracle

using Rng = std::mt19937_64;

int64_t uniform(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

LayoutIR random_ir(Rng& rng) {
  LayoutIR ir;
  ir.dense_bytes = uniform(rng, 0, 1) ? uniform(rng, 1, 8) : uniform(rng, 1, 64);
  ir.offset = uniform(rng, 0, 2) == 0 ? 0 : uniform(rng, -100, 100);
  const int ns = static_cast<int>(uniform(rng, 0, 6));
  constexpr int64_t kMaxStride = 4096;
  for (int k = 0; k < ns; ++k) {
    Stream s;
    const int64_t r = uniform(rng, 0, 99);
    // Counts 0..5, and now and then a long row (the host packer's
    // prefetching loop only runs on rows of more than 12 blocks).
    s.count = r < 4 ? 0 : r < 18 ? 1 : r < 94 ? uniform(rng, 2, 5) : uniform(rng, 6, 40);
    const int64_t inner_span = k == 0 ? ir.dense_bytes : ir.streams.back().count * ir.streams.back().stride;
    switch (uniform(rng, 0, 8)) {
      case 0: s.stride = 0; break;
      case 1: s.stride = ir.dense_bytes; break;                                             // folds (when innermost)
      case 2: s.stride = inner_span; break;                                                 // flattens
      case 3: s.stride = -ir.dense_bytes; break;                                            // reversed runs
      case 4: s.stride = uniform(rng, 1, std::max<int64_t>(1, ir.dense_bytes - 1)); break;  // overlap
      case 5: s.stride = -inner_span; break;
      case 6: s.stride = inner_span + uniform(rng, 1, 64); break;  // gap
      default: s.stride = uniform(rng, -kMaxStride / 8, kMaxStride / 8); break;
    }
    s.stride = std::clamp<int64_t>(s.stride, -kMaxStride, kMaxStride);
    ir.streams.push_back(s);
  }
  // Keep the packed size small.
  auto total = [&] {
    int64_t n = ir.dense_bytes;
    for (const Stream& s : ir.streams) n *= s.count;
    return n;
  };
  while (total() > 16384) {
    auto big = std::max_element(ir.streams.begin(), ir.streams.end(),
                                [](const Stream& a, const Stream& b) { return a.count < b.count; });
    --big->count;
  }
  return ir;
}

struct Bounds {
  int64_t lo = 0;
  int64_t hi = 0;  // one past
};
Bounds bounds_of(const std::vector<int64_t>& addrs) {
  if (addrs.empty()) return {};
  auto mm = std::minmax_element(addrs.begin(), addrs.end());
  return {*mm.first, *mm.second + 1};
}

constexpr size_t kGuard = 64;

// Packs [first, last) and compares with the oracle's slice; the output has
// poisoned guard bytes on both sides.
void check_pack(const StridedBlock& blk, const std::vector<int64_t>& addrs, const std::vector<unsigned char>& src,
                const char* src_base, int64_t first, int64_t last, unsigned char poison) {
  const int64_t n = static_cast<int64_t>(addrs.size());
  const int64_t end = last < 0 ? n : last;
  const int64_t len = std::max<int64_t>(0, end - first);
  std::vector<unsigned char> out(static_cast<size_t>(len) + 2 * kGuard, poison);
  std::vector<unsigned char> want = out;
  for (int64_t k = first; k < end; ++k) {
    want[kGuard + static_cast<size_t>(k - first)] = static_cast<unsigned char>(src_base[addrs[static_cast<size_t>(k)]]);
  }
  const std::vector<unsigned char> src_before = src;
  strata::pack_host(blk, src_base, out.data() + kGuard, first, last);
  std::string diff = first_difference(want, out, kGuard);
  EXPECT_EQ(diff, "") << "pack_host [" << first << "," << last << ") of " << blk.to_string();
  EXPECT_TRUE(src == src_before) << "pack_host wrote into its source";
}

// Unpacks [first, last) of a random packed stream into a poisoned
// destination: exactly the oracle's addresses change.
void check_unpack(const StridedBlock& blk, const std::vector<int64_t>& addrs, const Bounds& bnd, int64_t first,
                  int64_t last, Rng& rng, unsigned char poison) {
  const int64_t n = static_cast<int64_t>(addrs.size());
  const int64_t end = last < 0 ? n : last;
  const int64_t len = std::max<int64_t>(0, end - first);
  std::vector<unsigned char> packed(static_cast<size_t>(len) + 2 * kGuard);
  for (auto& c : packed) c = static_cast<unsigned char>(uniform(rng, 0, 255));
  const std::vector<unsigned char> packed_before = packed;
  std::vector<unsigned char> dst(static_cast<size_t>(bnd.hi - bnd.lo) + 2 * kGuard, poison);
  char* base = reinterpret_cast<char*>(dst.data()) + kGuard - bnd.lo;
  std::vector<unsigned char> want = dst;
  for (int64_t k = first; k < end; ++k) {
    want[static_cast<size_t>(addrs[static_cast<size_t>(k)] - bnd.lo) + kGuard] =
        packed[kGuard + static_cast<size_t>(k - first)];
  }
  strata::unpack_host(blk, packed.data() + kGuard, base, first, last);
  std::string diff = first_difference(want, dst, kGuard);
  EXPECT_EQ(diff, "") << "unpack_host [" << first << "," << last << ") of " << blk.to_string()
                      << " (destination index relative to the lowest byte " << bnd.lo << ")";
  EXPECT_TRUE(packed == packed_before) << "unpack_host wrote into its packed input";
}

// Random [first, last) ranges of a packed stream of n bytes in blocks of b.
std::vector<std::pair<int64_t, int64_t>> random_ranges(Rng& rng, int64_t n, int64_t b) {
  std::vector<std::pair<int64_t, int64_t>> r;
  r.push_back({0, -1});
  r.push_back({0, n});
  if (n == 0) return r;
  const int64_t blocks = b > 0 ? n / b : 0;
  for (int i = 0; i < 6; ++i) {
    int64_t first = 0, last = 0;
    switch (uniform(rng, 0, 5)) {
      case 0:  // anywhere
        first = uniform(rng, 0, n);
        last = uniform(rng, first, n);
        break;
      case 1:  // empty
        first = last = uniform(rng, 0, n);
        break;
      case 2:  // inside one block
        if (blocks > 0) {
          const int64_t k = uniform(rng, 0, blocks - 1);
          first = k * b + uniform(rng, 0, b - 1);
          last = uniform(rng, first, (k + 1) * b);
        }
        break;
      case 3:  // block boundaries
        if (blocks > 0) {
          first = uniform(rng, 0, blocks) * b;
          last = uniform(rng, first / b, blocks) * b;
        }
        break;
      case 4:  // inside a block to a later block
        first = uniform(rng, 0, n);
        last = std::min(n, first + b + uniform(rng, 1, 3 * b));
        break;
      default:  // a tail
        first = uniform(rng, 0, n);
        last = -1;
        break;
    }
    r.push_back({first, last});
  }
  return r;
}

TEST(LayoutRandom, PackUnpackMatchNaiveOracle) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0x5157A7A1ull);
  const int iterations = static_cast<int>(env_u64("STRATA_TEST_ITERATIONS", 20000));
  Rng rng(seed);
  int checked_unpack = 0, overlapping = 0, nonempty = 0, long_rows = 0;
  for (int it = 0; it < iterations; ++it) {
    const LayoutIR ir = random_ir(rng);
    SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed) + " (case " + std::to_string(it) + ") " +
                 ir_string(ir));
    const std::vector<int64_t> addrs = oracle(ir);

    // Every pass, alone and in a random order, keeps the address sequence.
    LayoutIR step = ir;
    for (int k = 0; k < 12; ++k) {
      switch (uniform(rng, 0, 4)) {
        case 0: strata::pass::collapse_empty(step); break;
        case 1: strata::pass::drop_unit_streams(step); break;
        case 2: strata::pass::fold_stream_into_dense(step); break;
        case 3: strata::pass::flatten_nested_streams(step); break;
        default: strata::pass::order_by_stride(step); break;
      }
      ASSERT_EQ(oracle(step), addrs) << "after a pass: " << ir_string(step);
    }

    const int64_t extent = uniform(rng, -64, 4096);
    const StridedBlock blk = canonicalize(ir, extent);
    ASSERT_EQ(oracle(blk), addrs) << "canonical form " << blk.to_string() << " changed the addresses";
    EXPECT_EQ(blk.extent, extent);
    EXPECT_EQ(blk.packed_bytes(), static_cast<int64_t>(addrs.size()));
    expect_canonical(blk);
    LayoutIR twice = ir_of(blk);
    strata::simplify(twice);
    EXPECT_TRUE(same_ir(twice, ir_of(blk))) << "simplify is not at a fixed point: " << ir_string(twice);

    if (!blk.dims.empty() && blk.dims[0].count > 12 && (blk.dims[0].stride >= 64 || blk.dims[0].stride <= -64)) {
      ++long_rows;
    }
    const Bounds bnd = bounds_of(addrs);
    if (!addrs.empty()) {
      ++nonempty;
      EXPECT_EQ(blk.lowest_byte(), bnd.lo) << blk.to_string();
      EXPECT_EQ(blk.highest_byte(), bnd.hi) << blk.to_string();
    }

    // Source: the layout's bytes with guards around them, random content.
    std::vector<unsigned char> src(static_cast<size_t>(bnd.hi - bnd.lo) + 2 * kGuard);
    for (auto& c : src) c = static_cast<unsigned char>(uniform(rng, 0, 255));
    const char* src_base = reinterpret_cast<const char*>(src.data()) + kGuard - bnd.lo;
    const unsigned char poison = static_cast<unsigned char>(uniform(rng, 0, 255));
    const bool unique = duplicate_free(addrs);
    overlapping += unique ? 0 : 1;
    for (auto [first, last] : random_ranges(rng, static_cast<int64_t>(addrs.size()), blk.block)) {
      check_pack(blk, addrs, src, src_base, first, last, poison);
      if (unique) {
        check_unpack(blk, addrs, bnd, first, last, rng, poison);
        ++checked_unpack;
      }
    }

    // repeat(): count elements `extent` apart are the element's addresses again.
    const int64_t count = uniform(rng, 0, 5);
    const StridedBlock rep = strata::repeat(blk, count);
    std::vector<int64_t> want;
    for (int64_t e = 0; e < count; ++e) {
      for (int64_t a : addrs) want.push_back(a + e * extent);
    }
    EXPECT_EQ(oracle(rep), want) << "repeat(" << blk.to_string() << ", " << count << ") = " << rep.to_string();
    EXPECT_EQ(rep.extent, extent * count);
    if (count != 1) expect_canonical(rep);

    if (testing::Test::HasFailure()) break;  // one replayable case, not thousands
  }
  // The generator must exercise what it claims to.
  EXPECT_GT(nonempty, iterations / 2);
  EXPECT_GT(overlapping, iterations / 50);
  EXPECT_GT(checked_unpack, iterations);
  EXPECT_GT(long_rows, iterations / 100) << "rows long enough for the prefetching loop";
}

// Large packs (over a MiB of whole blocks) take the host packer's other
// paths: streaming stores for blocks that are multiples of 16 bytes from 64
// on when the output is 16-byte aligned, plain copies otherwise. Each layout
// is packed into an aligned and a misaligned output, whole and in parts.
TEST(LayoutLarge, BigPacksMatchNaiveOracle) {
  struct Case {
    int64_t offset, block;
    std::vector<Stream> dims;
  };
  const std::vector<Case> cases = {
      {0, 64, {{20000, 96}}},    {16, 128, {{100, 160}, {100, 16384}}},
      {8, 80, {{15000, -112}}},  {0, 512, {{3000, 600}}},
      {4, 48, {{30000, 64}}},    {0, 256, {{8, 300}, {32, 2600}, {20, -90000}}},
      {0, 1024, {{1200, 1040}}},
  };
  Rng rng(env_u64("STRATA_TEST_SEED", 0x5157A7A1ull));
  for (const Case& c : cases) {
    const StridedBlock blk = canonicalize(LayoutIR{c.offset, c.block, c.dims}, 0);
    SCOPED_TRACE(blk.to_string());
    ASSERT_EQ(blk.dims, c.dims) << "test bug: not canonical";
    const std::vector<int64_t> addrs = oracle(blk);
    ASSERT_TRUE(duplicate_free(addrs));
    const int64_t n = static_cast<int64_t>(addrs.size());
    ASSERT_GE(n, int64_t{1} << 20);
    const Bounds bnd = bounds_of(addrs);
    std::vector<unsigned char> src(static_cast<size_t>(bnd.hi - bnd.lo) + 2 * kGuard);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    const char* src_base = reinterpret_cast<const char*>(src.data()) + kGuard - bnd.lo;
    const int64_t b = blk.block;
    const std::vector<std::pair<int64_t, int64_t>> ranges = {
        {0, -1}, {3 * b + 5, n - 7}, {0, (n / 2) / b * b}, {n / 3, n}, {b, n - b}};
    for (const auto& [first, last] : ranges) {
      const int64_t end = last < 0 ? n : last;
      std::vector<unsigned char> want(static_cast<size_t>(end - first));
      for (int64_t k = first; k < end; ++k) {
        want[static_cast<size_t>(k - first)] = static_cast<unsigned char>(src_base[addrs[static_cast<size_t>(k)]]);
      }
      for (int misalign : {0, 8, 1}) {
        // Output: guard, then the packed bytes at a 16-byte boundary + misalign.
        std::vector<unsigned char> out(want.size() + 2 * kGuard + 32, 0x5A);
        const size_t lead = (16 - reinterpret_cast<uintptr_t>(out.data() + kGuard) % 16) % 16 + misalign;
        unsigned char* dst = out.data() + kGuard + lead;
        strata::pack_host(blk, src_base, dst, first, last);
        EXPECT_EQ(std::memcmp(dst, want.data(), want.size()), 0)
            << "pack [" << first << "," << last << ") misaligned by " << misalign;
        bool guards = true;
        for (unsigned char* p = out.data(); p < dst; ++p) guards = guards && *p == 0x5A;
        for (unsigned char* p = dst + want.size(); p < out.data() + out.size(); ++p) guards = guards && *p == 0x5A;
        EXPECT_TRUE(guards) << "pack [" << first << "," << last << ") wrote outside its output";
      }
      check_unpack(blk, addrs, bnd, first, last, rng, 0xC3);
    }
  }
}

// Two builds of the same byte sequence simplify to the same IR.
TEST(LayoutRandom, SameSequenceSameCanonicalForm) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0x5157A7A1ull) + 1;
  Rng rng(seed);
  for (int it = 0; it < 2000; ++it) {
    SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed - 1) + " (case " + std::to_string(it) + ")");
    // A random canonical block, then a random re-expression: split the
    // dense run into a folded stream, split a dimension into two, add unit
    // streams.
    const LayoutIR ir = random_ir(rng);
    const StridedBlock canon = canonicalize(ir, 0);
    if (canon.empty()) continue;
    LayoutIR alt{canon.offset, canon.block, canon.dims};
    // Split the dense run: block = a * q  ->  dense q, stream (a, q).
    for (int64_t a = 2; a <= alt.dense_bytes; ++a) {
      if (alt.dense_bytes % a == 0 && uniform(rng, 0, 1)) {
        const int64_t q = alt.dense_bytes / a;
        alt.dense_bytes = q;
        alt.streams.insert(alt.streams.begin(), Stream{a, q});
        break;
      }
    }
    // Split a dimension of count c = a * b into (a, s), (b, a*s).
    for (size_t d = 0; d < alt.streams.size(); ++d) {
      const Stream s = alt.streams[d];
      for (int64_t a = 2; a < s.count; ++a) {
        if (s.count % a == 0 && uniform(rng, 0, 1)) {
          alt.streams[d] = Stream{a, s.stride};
          alt.streams.insert(alt.streams.begin() + static_cast<std::ptrdiff_t>(d) + 1,
                             Stream{s.count / a, a * s.stride});
          break;
        }
      }
    }
    // Unit streams anywhere.
    for (int k = static_cast<int>(uniform(rng, 0, 3)); k > 0; --k) {
      const size_t at = static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(alt.streams.size())));
      alt.streams.insert(alt.streams.begin() + static_cast<std::ptrdiff_t>(at), Stream{1, uniform(rng, -99, 99)});
    }
    ASSERT_EQ(oracle(alt), oracle(canon)) << "test bug: the re-expression changed the bytes";
    const StridedBlock again = canonicalize(alt, 0);
    EXPECT_EQ(again, canon) << ir_string(alt) << " -> " << again.to_string() << ", want " << canon.to_string();
    if (testing::Test::HasFailure()) break;
  }
}

}  // namespace
