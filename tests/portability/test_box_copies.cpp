// The copy engine's plan of a strided block (portability/layout/box_copies.hpp)
// without a GPU: the boxes are executed here by a host model of what
// cudaMemcpy3D does (rows of `width` bytes, `pitch` apart, `slice_pitch`
// between slices, dense on the packed side) and compared with an oracle
// that walks the block's definition with plain loops. Random layouts,
// poisoned outputs, and the bytes between the blocks must stay untouched.
//
// Replay with STRATA_TEST_SEED=<seed>; STRATA_TEST_ITERATIONS sets the count.
#include <strata/layout.hpp>

#include "portability/layout/box_copies.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

using strata::Stream;
using strata::StridedBlock;
using strata::detail::BoxCopy;
using strata::detail::plan_box_copies;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::strtoull(v, nullptr, 0);
}

// Every byte address of the block in packed order: an odometer over the
// dimensions, innermost first, then the block's bytes.
std::vector<int64_t> oracle_addresses(const StridedBlock& b) {
  std::vector<int64_t> out;
  int64_t blocks = 1;
  for (const Stream& d : b.dims) blocks *= d.count;
  if (b.block <= 0) return out;
  for (int64_t k = 0; k < blocks; ++k) {
    int64_t rest = k;
    int64_t at = b.offset;
    for (const Stream& d : b.dims) {
      at += (rest % d.count) * d.stride;
      rest /= d.count;
    }
    for (int64_t j = 0; j < b.block; ++j) out.push_back(at + j);
  }
  return out;
}

// What the runtime's 3D copy does with one box, on the host.
void run_box(const BoxCopy& box, char* user, char* packed, bool pack) {
  int64_t p = box.packed_offset;
  for (int64_t z = 0; z < box.depth; ++z) {
    for (int64_t y = 0; y < box.height; ++y) {
      char* u = user + box.user_offset + z * box.slice_pitch + y * box.pitch;
      if (pack) {
        std::memcpy(packed + p, u, static_cast<size_t>(box.width));
      } else {
        std::memcpy(u, packed + p, static_cast<size_t>(box.width));
      }
      p += box.width;
    }
  }
}

// A random layout of 0-4 dimensions: innermost strides sometimes below the
// block (not movable), outer ones sometimes negative, interleaved with the
// rows inside, or whole multiples of them (3D boxes).
StridedBlock random_layout(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  StridedBlock b;
  b.block = pick(1, 40);
  const int ndims = static_cast<int>(pick(0, 4));
  int64_t span = b.block;
  for (int d = 0; d < ndims; ++d) {
    const int64_t count = pick(2, 5);
    int64_t stride = 0;
    switch (pick(0, 3)) {
      case 0: stride = span + pick(0, 16); break;  // disjoint, a gap
      case 1: stride = (d == 0 ? b.block : b.dims.back().stride) * pick(1, 4); break;
      case 2: stride = -(span + pick(0, 8)); break;                                      // backwards
      default: stride = pick(0, 2) == 0 ? pick(0, b.block) : span + pick(0, 64); break;  // overlapping rows
    }
    // Outer repetitions mostly do not overlap; some interleave with the rows
    // inside (a stride a multiple of theirs but below their span).
    if (d > 0 && stride > 0 && stride < span && pick(0, 3) != 0) stride = span;
    b.dims.push_back(Stream{count, stride});
    span = std::abs(stride) * count + span;
  }
  b.offset = span + pick(0, 32);  // room for backward strides
  return b;
}

TEST(BoxCopies, ThreeDimensionalSubarrayIsOneBox) {
  // The x face of a 70^3 grid of doubles, radius 3: 24-byte rows.
  StridedBlock face;
  face.offset = 3 * 8 + 3 * 560 + 3 * 560 * 70;
  face.block = 24;
  face.dims = {Stream{64, 560}, Stream{64, 560 * 70}};
  std::vector<BoxCopy> boxes;
  ASSERT_TRUE(plan_box_copies(face, 16, &boxes));
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].width, 24);
  EXPECT_EQ(boxes[0].height, 64);
  EXPECT_EQ(boxes[0].pitch, 560);
  EXPECT_EQ(boxes[0].depth, 64);
  EXPECT_EQ(boxes[0].slice_pitch, 560 * 70);
  EXPECT_EQ(boxes[0].user_offset, face.offset);
  EXPECT_EQ(boxes[0].bytes(), face.packed_bytes());
}

TEST(BoxCopies, LimitsAndRefusals) {
  std::vector<BoxCopy> boxes;
  StridedBlock b;
  b.block = 8;
  b.dims = {Stream{4, 16}, Stream{3, 40}, Stream{5, 1000}};  // 40 is no multiple of 16: 2D boxes, 15 of them
  ASSERT_TRUE(plan_box_copies(b, 15, &boxes));
  EXPECT_EQ(boxes.size(), 15u);
  EXPECT_FALSE(plan_box_copies(b, 14, &boxes));
  EXPECT_TRUE(boxes.empty());
  b.dims = {Stream{4, 4}};  // rows overlap
  EXPECT_FALSE(plan_box_copies(b, 16, &boxes));
  b.dims = {Stream{4, -16}};  // rows backwards
  EXPECT_FALSE(plan_box_copies(b, 16, &boxes));
  b.dims = {Stream{2, strata::detail::kMaxCopyPitch + 1}};
  EXPECT_FALSE(plan_box_copies(b, 16, &boxes));
  b.dims = {Stream{0, 16}};  // empty: nothing to move
  EXPECT_TRUE(plan_box_copies(b, 16, &boxes));
  EXPECT_TRUE(boxes.empty());
  b.dims = {};  // contiguous: one row
  ASSERT_TRUE(plan_box_copies(b, 1, &boxes));
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].bytes(), 8);
}

TEST(BoxCopies, RandomLayoutsMatchTheOracle) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", std::random_device{}());
  const uint64_t iterations = env_u64("STRATA_TEST_ITERATIONS", 3000);
  std::mt19937_64 rng(seed);
  uint64_t planned = 0;
  uint64_t three_d = 0;
  for (uint64_t it = 0; it < iterations; ++it) {
    const StridedBlock layout = random_layout(rng);
    SCOPED_TRACE("seed " + std::to_string(seed) + " iteration " + std::to_string(it) + " " + layout.to_string());
    const int64_t max_boxes = 1 + static_cast<int64_t>(rng() % 40);
    std::vector<BoxCopy> boxes;
    const bool ok = plan_box_copies(layout, max_boxes, &boxes);
    const std::vector<int64_t> addresses = oracle_addresses(layout);
    if (!ok) {
      // Refused only for a reason the header names.
      ASSERT_TRUE(boxes.empty());
      const bool bad_rows = !layout.dims.empty() && (layout.dims[0].stride < layout.block);
      int64_t outer = 1;
      for (size_t d = 1; d < layout.dims.size(); ++d) outer *= layout.dims[d].count;
      ASSERT_TRUE(bad_rows || outer > max_boxes) << "refused a movable layout";
      continue;
    }
    ++planned;
    ASSERT_LE(static_cast<int64_t>(boxes.size()), max_boxes);
    for (const BoxCopy& box : boxes) {
      ASSERT_GE(box.pitch, box.width);
      ASSERT_EQ(box.slice_pitch % box.pitch, 0);
      ASSERT_GE(box.slice_pitch / box.pitch, box.height);
      if (box.depth > 1) ++three_d;
    }
    const int64_t size = layout.highest_byte() + 64;
    const int64_t packed_bytes = layout.packed_bytes();
    ASSERT_EQ(static_cast<int64_t>(addresses.size()), packed_bytes);
    std::vector<char> user(static_cast<size_t>(size));
    for (char& c : user) c = static_cast<char>(rng());
    // Pack: every packed byte is the oracle's, none written twice or missed.
    std::vector<char> packed(static_cast<size_t>(packed_bytes) + 16, '\x5a');
    for (const BoxCopy& box : boxes) run_box(box, user.data(), packed.data(), true);
    for (int64_t i = 0; i < packed_bytes; ++i) {
      ASSERT_EQ(packed[static_cast<size_t>(i)], user[static_cast<size_t>(addresses[static_cast<size_t>(i)])])
          << "packed byte " << i;
    }
    for (size_t i = static_cast<size_t>(packed_bytes); i < packed.size(); ++i) ASSERT_EQ(packed[i], '\x5a');
    // Unpack into a poisoned buffer: the layout's bytes get the packed
    // stream, every other byte keeps its poison.
    std::vector<char> target(static_cast<size_t>(size), '\x33');
    std::vector<char> expect(target);
    for (int64_t i = 0; i < packed_bytes; ++i) {
      expect[static_cast<size_t>(addresses[static_cast<size_t>(i)])] = packed[static_cast<size_t>(i)];
    }
    for (const BoxCopy& box : boxes) run_box(box, target.data(), packed.data(), false);
    ASSERT_EQ(target, expect);
  }
  // The generator must reach both kinds of plan, or the test proves little.
  EXPECT_GT(planned, iterations / 4);
  EXPECT_GT(three_d, iterations / 50);
}

}  // namespace
