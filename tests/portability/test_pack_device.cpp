// The device pack/unpack kernels (portability/gpu/pack_kernels.cu) against
// the host engine (strata::pack_host / unpack_host, itself checked against
// a naive oracle in test_layout.cpp), byte for byte:
//  - thousands of seeded random layouts (negative, zero and overlapping
//    strides, odd block lengths, base and packed pointers misaligned by
//    0..15 bytes so that every word size runs), whole and in block ranges
//    [b0, b1), in device, managed and mapped pinned host memory;
//  - outputs poisoned and surrounded by guard bytes, checked after copying
//    the whole region back; inputs checked unchanged;
//  - narrow blocks packed in groups of 8 bytes, and next to them the ranges
//    and pointers that keep the one-block path;
//  - large layouts (64 MiB and more packed: grids beyond one resident wave),
//    a layout with more dimensions than a kernel takes, and one with more
//    than 2^32 blocks (the kernels' 64-bit index path).
// Every test skips without a GPU. Replay a failing randomized run with
// STRATA_TEST_SEED=<seed> (printed in the failure message). Under
// compute-sanitizer set STRATA_TEST_ITERATIONS (e.g. 100): it also shrinks
// the large cases and skips the 4 GiB one.
#include <strata/layout.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/pack_device.hpp"
#include "portability/layout/box_copies.hpp"
#include "portability/layout/strided_index.hpp"

#include <gtest/gtest.h>

#if defined(STRATA_HAVE_CUDA)
// gpu_api.hpp has no managed allocation: the test asks the runtime itself.
#include <cuda_runtime.h>
#define STRATA_TEST_MANAGED 1
#else
#define STRATA_TEST_MANAGED 0
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace gpu = strata::gpu;
using strata::LayoutIR;
using strata::Status;
using strata::Stream;
using strata::StridedBlock;

using Rng = std::mt19937_64;
using Bytes = std::vector<unsigned char>;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

bool reduced() { return std::getenv("STRATA_TEST_ITERATIONS") != nullptr; }

int64_t uniform(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

void fill_random(Bytes& b, Rng& rng) {
  for (size_t i = 0; i + 8 <= b.size(); i += 8) {
    const uint64_t w = rng();
    std::memcpy(&b[i], &w, 8);
  }
  for (size_t i = b.size() / 8 * 8; i < b.size(); ++i) b[i] = static_cast<unsigned char>(rng());
}

// "" when equal, else where the first difference is.
std::string first_difference(const Bytes& want, const Bytes& got, int64_t origin, const char* what) {
  if (want.size() != got.size()) return "size differs";
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      std::ostringstream os;
      os << what << ": first difference at " << static_cast<int64_t>(i) - origin << " (buffer index " << i << "): want "
         << int(want[i]) << ", got " << int(got[i]);
      return os.str();
    }
  }
  return "";
}

// ---------------------------------------------------------------------------
// Memory of three kinds, addressed by kernels through `dev`.

enum class Kind { device, managed, mapped };
const char* name_of(Kind k) { return k == Kind::device ? "device" : k == Kind::managed ? "managed" : "mapped pinned"; }

struct Buffer {
  Kind kind = Kind::device;
  void* alloc = nullptr;  // what to free
  char* dev = nullptr;    // the pointer kernels use
  size_t bytes = 0;
};

bool allocate(Kind kind, size_t bytes, Buffer* out) {
  Buffer b;
  b.kind = kind;
  b.bytes = bytes;
  switch (kind) {
    case Kind::device:
      if (gpu::malloc_device(&b.alloc, bytes) != Status::ok) return false;
      b.dev = static_cast<char*>(b.alloc);
      break;
    case Kind::managed:
#if STRATA_TEST_MANAGED
      if (cudaMallocManaged(&b.alloc, bytes, cudaMemAttachGlobal) != cudaSuccess) return false;
      b.dev = static_cast<char*>(b.alloc);
      break;
#else
      return false;
#endif
    case Kind::mapped: {
      if (gpu::malloc_pinned(&b.alloc, bytes, true) != Status::ok) return false;
      void* d = nullptr;
      if (gpu::mapped_device_pointer(b.alloc, &d) != Status::ok) {
        gpu::free_pinned(b.alloc);
        return false;
      }
      b.dev = static_cast<char*>(d);
      break;
    }
  }
  *out = b;
  return true;
}

void release(Buffer& b) {
  if (b.alloc == nullptr) return;
  switch (b.kind) {
    case Kind::device: gpu::free_device(b.alloc); break;
    case Kind::managed:
#if STRATA_TEST_MANAGED
      cudaFree(b.alloc);
#endif
      break;
    case Kind::mapped: gpu::free_pinned(b.alloc); break;
  }
  b = Buffer{};
}

// ---------------------------------------------------------------------------
// Random layouts: like test_layout.cpp's generator, with alignments chosen so
// that every word size comes up, and longer rows.

LayoutIR random_ir(Rng& rng) {
  LayoutIR ir;
  const int64_t align = int64_t{1} << uniform(rng, 0, 4);  // 1..16
  ir.dense_bytes = uniform(rng, 0, 3) == 0 ? uniform(rng, 1, 70) : align * uniform(rng, 1, 512 / align);
  ir.offset = uniform(rng, 0, 3) == 0 ? uniform(rng, -100, 100) : align * uniform(rng, -8, 8);
  const int ns = static_cast<int>(uniform(rng, 0, 5));
  for (int k = 0; k < ns; ++k) {
    Stream s;
    const int64_t r = uniform(rng, 0, 99);
    s.count = r < 3 ? 0 : r < 12 ? 1 : r < 80 ? uniform(rng, 2, 6) : uniform(rng, 7, 300);
    const int64_t inner_span = k == 0 ? ir.dense_bytes : ir.streams.back().count * ir.streams.back().stride;
    switch (uniform(rng, 0, 11)) {
      case 0: s.stride = 0; break;
      case 1: s.stride = ir.dense_bytes; break;                                             // folds (when innermost)
      case 2: s.stride = inner_span; break;                                                 // flattens
      case 3: s.stride = -ir.dense_bytes; break;                                            // reversed runs
      case 4: s.stride = uniform(rng, 1, std::max<int64_t>(1, ir.dense_bytes - 1)); break;  // overlap
      case 5: s.stride = -inner_span; break;
      case 6: s.stride = inner_span + align * uniform(rng, 1, 8); break;  // gap
      case 7: s.stride = 2 * ir.dense_bytes; break;                       // tight
      case 8: s.stride = align * uniform(rng, -600 / align, 600 / align); break;
      default: {  // at least the inner span apart, either way
        const int64_t least = (std::abs(inner_span) + align - 1) / align;
        s.stride = (uniform(rng, 0, 1) ? 1 : -1) * align * uniform(rng, least, least + 600 / align);
        break;
      }
    }
    s.stride = std::clamp<int64_t>(s.stride, -8192, 8192);
    ir.streams.push_back(s);
  }
  return ir;
}

// Shrinks the largest count until the packed bytes and the span fit.
void fit(LayoutIR& ir, int64_t max_packed, int64_t max_span) {
  for (;;) {
    const StridedBlock b = strata::canonicalize(ir, 0);
    if (b.packed_bytes() <= max_packed && b.highest_byte() - b.lowest_byte() <= max_span) return;
    auto big = std::max_element(ir.streams.begin(), ir.streams.end(),
                                [](const Stream& a, const Stream& c) { return a.count < c.count; });
    if (big == ir.streams.end() || big->count <= 1) {
      ir.dense_bytes = std::max<int64_t>(1, ir.dense_bytes / 2);
    } else {
      big->count = big->count * 3 / 4;
    }
  }
}

// Does any byte appear twice? (unpack of such a layout has no defined result)
bool overlapping(const StridedBlock& b) {
  if (b.empty()) return false;
  const int64_t lo = b.lowest_byte();
  std::vector<unsigned char> seen(static_cast<size_t>(b.highest_byte() - lo), 0);
  const size_t nd = b.dims.size();
  std::vector<int64_t> idx(nd, 0);
  for (int64_t k = 0, n = b.block_count(); k < n; ++k) {
    int64_t off = b.offset - lo;
    for (size_t d = 0; d < nd; ++d) off += idx[d] * b.dims[d].stride;
    for (int64_t j = 0; j < b.block; ++j) {
      if (seen[static_cast<size_t>(off + j)]++) return true;
    }
    for (size_t d = 0; d < nd; ++d) {
      if (++idx[d] < b.dims[d].count) break;
      idx[d] = 0;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------

constexpr int64_t kGuard = 256;     // guard bytes on each side of every region
constexpr int64_t kPool = 3 << 20;  // per buffer in the random test

StridedBlock layout_of(int64_t offset, int64_t block, const std::vector<Stream>& dims) {
  StridedBlock b;
  b.offset = offset;
  b.block = block;
  b.dims = dims;
  return b;
}

// Device buffers for one layout, with room for the guard bytes around its
// span (`user`) and its packed bytes (`packed`).
bool allocate_for(const StridedBlock& b, Buffer* user, Buffer* packed) {
  const int64_t room = 2 * kGuard + 32;
  if (!allocate(Kind::device, static_cast<size_t>(b.highest_byte() - b.lowest_byte() + room), user)) return false;
  if (allocate(Kind::device, static_cast<size_t>(b.packed_bytes() + room), packed)) return true;
  release(*user);
  return false;
}

class PackDevice : public ::testing::Test {
 public:
  void SetUp() override {
    if (!gpu::available()) GTEST_SKIP() << "no GPU (strata::gpu::available() is false)";
    ASSERT_EQ(gpu::stream_create(&stream_), Status::ok);
  }
  void TearDown() override {
    if (stream_ != nullptr) gpu::stream_destroy(stream_);
  }

  void to_device(char* dst, const Bytes& src) {
    ASSERT_EQ(gpu::memcpy_async(dst, src.data(), src.size(), stream_), Status::ok);
    ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
  }
  void to_host(Bytes& dst, const char* src) {
    ASSERT_EQ(gpu::memcpy_async(dst.data(), src, dst.size(), stream_), Status::ok);
    ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
  }

  gpu::Stream stream_ = nullptr;
};

// One layout, one pair of buffers: pack [b0, b1) and compare; unpack the
// same range of random packed bytes into a poisoned destination and compare.
struct Case {
  StridedBlock layout;
  int64_t b0 = 0, b1 = -1;
  int64_t src_misalign = 0, packed_misalign = 0;
  bool unpack = true;
};

// Checks `c` with src/packed regions at the start of `src_buf`/`packed_buf`.
// Returns a description of the first mismatch ("" when all is well).
void check_case(PackDevice* t, const Case& c, Buffer& src_buf, Buffer& packed_buf, Rng& rng, std::string* error) {
  const StridedBlock& b = c.layout;
  const int64_t lo = b.lowest_byte();
  const int64_t span = b.highest_byte() - lo;
  const int64_t nblocks = b.block_count();
  const int64_t b1 = c.b1 < 0 ? nblocks : c.b1;
  const int64_t packed_len = (b1 - c.b0) * b.block;
  const size_t src_region = static_cast<size_t>(span + 2 * kGuard + 16);
  const size_t packed_region = static_cast<size_t>(packed_len + 2 * kGuard + 16);
  if (src_region > src_buf.bytes || packed_region > packed_buf.bytes) {
    *error = "test bug: region larger than its buffer";
    return;
  }
  // base + lo is the lowest byte touched: kGuard + misalign into the region.
  const int64_t src_origin = kGuard + c.src_misalign;
  char* base = src_buf.dev + src_origin - lo;
  char* packed = packed_buf.dev + kGuard + c.packed_misalign;

  // --- pack ---
  Bytes src(src_region);
  fill_random(src, rng);
  Bytes out(packed_region);
  const unsigned char poison = static_cast<unsigned char>(rng());
  std::fill(out.begin(), out.end(), poison);
  t->to_device(src_buf.dev, src);
  t->to_device(packed_buf.dev, out);
  Bytes want = out;
  strata::pack_host(b, src.data() + src_origin - lo, want.data() + kGuard + c.packed_misalign, c.b0 * b.block,
                    b1 * b.block);
  const Status st = gpu::pack_async(b, base, packed, t->stream_, c.b0, c.b1);
  if (st != Status::ok) {
    *error = std::string("pack_async: ") + strata::to_string(st);
    return;
  }
  if (gpu::stream_synchronize(t->stream_) != Status::ok) {
    *error = "pack: stream_synchronize failed";
    return;
  }
  Bytes got(packed_region);
  t->to_host(got, packed_buf.dev);
  *error = first_difference(want, got, kGuard + c.packed_misalign, "pack output (index relative to packed)");
  if (!error->empty()) return;
  Bytes src_after(src_region);
  t->to_host(src_after, src_buf.dev);
  if (src_after != src) {
    *error = "pack wrote into its source";
    return;
  }
  if (!c.unpack) return;

  // --- unpack the same range of random packed bytes ---
  Bytes pk(packed_region);
  fill_random(pk, rng);
  Bytes dst(src_region);
  const unsigned char poison2 = static_cast<unsigned char>(rng());
  std::fill(dst.begin(), dst.end(), poison2);
  t->to_device(packed_buf.dev, pk);
  t->to_device(src_buf.dev, dst);
  Bytes want_dst = dst;
  strata::unpack_host(b, pk.data() + kGuard + c.packed_misalign, want_dst.data() + src_origin - lo, c.b0 * b.block,
                      b1 * b.block);
  const Status su = gpu::unpack_async(b, packed, base, t->stream_, c.b0, c.b1);
  if (su != Status::ok) {
    *error = std::string("unpack_async: ") + strata::to_string(su);
    return;
  }
  if (gpu::stream_synchronize(t->stream_) != Status::ok) {
    *error = "unpack: stream_synchronize failed";
    return;
  }
  Bytes got_dst(src_region);
  t->to_host(got_dst, src_buf.dev);
  *error = first_difference(want_dst, got_dst, src_origin,
                            "unpack destination (index relative to the lowest byte of the layout)");
  if (!error->empty()) return;
  Bytes pk_after(packed_region);
  t->to_host(pk_after, packed_buf.dev);
  if (pk_after != pk) *error = "unpack wrote into its packed input";
}

std::string describe(const Case& c, const Buffer& s, const Buffer& p) {
  std::ostringstream os;
  os << c.layout.to_string() << " blocks [" << c.b0 << ", " << c.b1 << ") base misaligned by " << c.src_misalign
     << ", packed by " << c.packed_misalign << "; user buffer " << name_of(s.kind) << ", packed " << name_of(p.kind);
  return os.str();
}

TEST_F(PackDevice, RandomLayoutsMatchHostEngine) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0xDE71CEull);
  const int iterations = static_cast<int>(env_u64("STRATA_TEST_ITERATIONS", 3000));
  Rng rng(seed);
  std::vector<Kind> kinds = {Kind::device, Kind::mapped};
  if (STRATA_TEST_MANAGED) kinds.push_back(Kind::managed);
  std::vector<Buffer> user(kinds.size()), packed(kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) {
    ASSERT_TRUE(allocate(kinds[k], kPool, &user[k])) << name_of(kinds[k]);
    ASSERT_TRUE(allocate(kinds[k], kPool, &packed[k])) << name_of(kinds[k]);
  }
  gpu::DeviceProperties props;
  int device = 0;
  ASSERT_EQ(gpu::get_device(&device), Status::ok);
  ASSERT_EQ(gpu::properties(device, &props), Status::ok);

  int per_word[17] = {};
  int partial = 0, unpacked = 0, segmented = 0, multi_dim = 0;
  for (int it = 0; it < iterations; ++it) {
    LayoutIR ir = random_ir(rng);
    fit(ir, 256 << 10, kPool - 2 * kGuard - 32);
    Case c;
    c.layout = strata::canonicalize(ir, 0);
    if (c.layout.empty()) continue;
    const int64_t n = c.layout.block_count();
    switch (uniform(rng, 0, 3)) {
      case 0:
        c.b0 = 0;
        c.b1 = -1;
        break;
      case 1:
        c.b0 = uniform(rng, 0, n);
        c.b1 = uniform(rng, c.b0, n);
        break;
      case 2:
        c.b0 = uniform(rng, 0, n);
        c.b1 = -1;
        break;
      default:
        c.b0 = 0;
        c.b1 = uniform(rng, 0, n);
        break;
    }
    c.src_misalign = uniform(rng, 0, 1) ? 0 : uniform(rng, 1, 15);
    c.packed_misalign = uniform(rng, 0, 1) ? 0 : uniform(rng, 1, 15);
    c.unpack = !overlapping(c.layout);
    const size_t ks = static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(kinds.size()) - 1));
    const size_t kp = static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(kinds.size()) - 1));
    SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed) + " (case " + std::to_string(it) + ") " +
                 describe(c, user[ks], packed[kp]));
    // What the kernels will run (for the coverage counts below).
    const int64_t lo = c.layout.lowest_byte();
    const gpu::LaunchPlan plan = gpu::plan_launch(c.layout, user[ks].dev + kGuard + c.src_misalign - lo,
                                                  packed[kp].dev + kGuard + c.packed_misalign, n, props);
    ++per_word[plan.word];
    partial += (c.b0 != 0 || (c.b1 >= 0 && c.b1 != n)) ? 1 : 0;
    unpacked += c.unpack ? 1 : 0;
    segmented += plan.words_per_block > plan.threads[0] ? 1 : 0;
    multi_dim += c.layout.dims.size() >= 2 ? 1 : 0;
    std::string error;
    check_case(this, c, user[ks], packed[kp], rng, &error);
    ASSERT_EQ(error, "");
  }
  for (size_t k = 0; k < kinds.size(); ++k) {
    release(user[k]);
    release(packed[k]);
  }
  if (iterations >= 1000) {
    for (int w : {1, 2, 4, 8, 16}) EXPECT_GT(per_word[w], iterations / 100) << "word " << w << " rarely exercised";
    EXPECT_GT(partial, iterations / 4);
    EXPECT_GT(unpacked, iterations / 3);
    EXPECT_GT(multi_dim, iterations / 10);
    EXPECT_GT(segmented, 0) << "no block longer than one CTA row";
  }
}

// Large layouts: grids beyond one resident wave, whole and in block ranges.
TEST_F(PackDevice, LargeLayouts) {
  const bool small = reduced();
  struct Large {
    int64_t offset, block;
    std::vector<Stream> dims;
    int64_t misalign;
  };
  const int64_t mib = int64_t{1} << 20;
  std::vector<Large> cases = {
      {0, 4, {{16 * mib, 8}}, 0},                       // 64 MiB of 4-B blocks, tight stride
      {0, 8, {{8 * mib + 3, 40}}, 0},                   // 64 MiB of 8-B blocks at stride 40
      {16, 48, {{512, 96}, {2800, 512 * 96 + 32}}, 4},  // subarray of 48-B blocks, 4-B aligned, ~66 MiB
      {0, 256, {{300000, -512}}, 0},                    // 73 MiB of 256-B blocks, negative stride
      {0, 80 * mib + 5, {}, 1},                         // contiguous, 1-B words, many segments
  };
  if (small) {  // under compute-sanitizer: same shapes, a few MiB
    cases = {{0, 4, {{mib, 8}}, 0},
             {0, 8, {{mib / 2 + 3, 40}}, 0},
             {16, 48, {{512, 96}, {60, 512 * 96 + 32}}, 4},
             {0, 256, {{20000, -512}}, 0},
             {0, 3 * mib + 5, {}, 1}};
  }
  Rng rng(env_u64("STRATA_TEST_SEED", 0xDE71CEull));
  for (const Large& l : cases) {
    Case c;
    c.layout = layout_of(l.offset, l.block, l.dims);
    c.src_misalign = l.misalign;
    const int64_t n = c.layout.block_count();
    Buffer user, packed;
    ASSERT_TRUE(allocate_for(c.layout, &user, &packed));
    const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, -1}, {n / 3, n - n / 5}, {1, n}};
    for (const auto& [b0, b1] : ranges) {
      c.b0 = b0;
      c.b1 = b1;
      c.packed_misalign = b0 == 1 ? 8 : 0;
      SCOPED_TRACE(describe(c, user, packed));
      std::string error;
      check_case(this, c, user, packed, rng, &error);
      EXPECT_EQ(error, "");
    }
    release(user);
    release(packed);
  }
}

// More outer dimensions than the kernels take: the launcher splits them.
TEST_F(PackDevice, MoreDimensionsThanAKernelTakes) {
  constexpr int kMax = strata::detail::StridedIndex::kMaxDims;
  StridedBlock b;
  b.offset = 24;
  b.block = 12;
  int64_t stride = 16;
  for (int d = 0; d < kMax + 3; ++d) {
    b.dims.push_back({2, d % 3 == 2 ? -stride : stride});
    stride = stride * 2 + 16;
  }
  ASSERT_EQ(b, strata::canonicalize(LayoutIR{b.offset, b.block, b.dims}, 0)) << "test bug: not canonical";
  const int64_t n = b.block_count();
  const int64_t sub = int64_t{1} << kMax;
  Buffer user, packed;
  ASSERT_TRUE(allocate_for(b, &user, &packed));
  Rng rng(env_u64("STRATA_TEST_SEED", 0xDE71CEull));
  const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, -1},    {sub - 3, sub + 5},         {sub, 3 * sub},
                                                           {5, n - 7}, {2 * sub + 1, 2 * sub + 2}, {n - 1, n}};
  for (const auto& [b0, b1] : ranges) {
    Case c;
    c.layout = b;
    c.b0 = b0;
    c.b1 = b1;
    c.src_misalign = 4;
    SCOPED_TRACE(describe(c, user, packed));
    std::string error;
    check_case(this, c, user, packed, rng, &error);
    EXPECT_EQ(error, "");
  }
  release(user);
  release(packed);
}

// More than 2^32 blocks: the kernels' 64-bit index path (a zero inner stride
// keeps the source tiny; the packed output is 4 GiB).
TEST_F(PackDevice, MoreThan2To32Blocks) {
  if (reduced()) GTEST_SKIP() << "4 GiB case skipped when STRATA_TEST_ITERATIONS is set";
  const int64_t inner = 65536, outer = 65536 + 64;
  StridedBlock b;
  b.block = 1;
  b.dims = {{inner, 0}, {outer, 1}};
  const int64_t n = b.block_count();
  ASSERT_GT(n, int64_t{1} << 32);
  Buffer user, packed;
  ASSERT_TRUE(allocate(Kind::device, static_cast<size_t>(outer), &user));
  if (!allocate(Kind::device, static_cast<size_t>(n), &packed)) {
    release(user);
    GTEST_SKIP() << "cannot allocate " << n << " bytes of device memory";
  }
  Rng rng(env_u64("STRATA_TEST_SEED", 0xDE71CEull));
  Bytes src(static_cast<size_t>(outer));
  fill_random(src, rng);
  to_device(user.dev, src);
  ASSERT_EQ(gpu::memset_async(packed.dev, 0, static_cast<size_t>(n), stream_), Status::ok);
  // Blocks [b0, n): byte k of the output is src[(b0 + k) / inner].
  const int64_t b0 = 12345;
  ASSERT_EQ(gpu::pack_async(b, user.dev, packed.dev, stream_, b0, -1), Status::ok);
  ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
  const int64_t chunk = int64_t{256} << 20;
  Bytes got(static_cast<size_t>(chunk));
  for (int64_t at = 0; at < n - b0; at += chunk) {
    const int64_t len = std::min(chunk, n - b0 - at);
    got.resize(static_cast<size_t>(len));
    to_host(got, packed.dev + at);
    // Runs of `inner` equal bytes: block p holds src[p / inner].
    for (int64_t k = 0; k < len;) {
      const int64_t p = b0 + at + k;
      const int64_t run = std::min(len - k, inner - p % inner);
      const unsigned char want = src[static_cast<size_t>(p / inner)];
      const auto first = got.begin() + k;
      const auto bad = std::find_if(first, first + run, [want](unsigned char v) { return v != want; });
      ASSERT_TRUE(bad == first + run) << "packed byte " << at + (bad - got.begin()) << ": want " << int(want)
                                      << ", got " << int(*bad);
      k += run;
    }
  }
  release(user);
  release(packed);
}

// Narrow blocks in runs (LaunchPlan::group): packs of 1-, 2- and 4-byte
// blocks at small strides move 8 packed bytes per thread, unpacks tiles of
// 32 threads x 8 bytes. Whole layouts and ranges that keep the runs (and,
// next to them, ranges and packed pointers that do not, which the
// one-block path takes), positive, negative and zero strides, several
// dimensions, grids beyond one resident wave, and the 64-bit index path (an
// outer count over 2^32, a range of it).
TEST_F(PackDevice, GroupsOfNarrowBlocksMatchHostEngine) {
  const bool small = reduced();
  const int64_t big = small ? 1 << 16 : 4 << 20;  // blocks of the largest case
  struct Narrow {
    int64_t offset, block;
    std::vector<Stream> dims;
    bool unpack;
  };
  const std::vector<Narrow> cases = {
      {0, 1, {{4096, 2}}, true},
      {5, 1, {{4096, 3}}, true},
      {0, 1, {{4096, -2}}, true},
      {0, 1, {{800, 64}}, true},
      {0, 1, {{800, -64}}, true},
      {0, 1, {{64, 0}}, false},  // one byte repeated: pack only
      {3, 1, {{64, 2}, {50, 200}, {3, 20000}}, true},
      {0, 2, {{4000, 4}}, true},
      {2, 2, {{4000, -6}}, true},
      {0, 2, {{400, 4}, {30, 2000}}, true},
      {0, 4, {{4096, 8}}, true},
      {4, 4, {{1000, -12}, {40, 24000}}, true},
      {0, 1, {{big, 2}}, true},
      {0, 2, {{big / 2, 6}}, true},
  };
  Rng rng(env_u64("STRATA_TEST_SEED", 0x6A0Bull));
  gpu::DeviceProperties props;
  int device = 0;
  ASSERT_EQ(gpu::get_device(&device), Status::ok);
  ASSERT_EQ(gpu::properties(device, &props), Status::ok);
  int grouped = 0, ungrouped = 0, tiled = 0, untiled = 0;
  for (const Narrow& l : cases) {
    Case c;
    c.layout = layout_of(l.offset, l.block, l.dims);
    c.unpack = l.unpack;
    const int64_t n = c.layout.block_count();
    Buffer user, packed;
    ASSERT_TRUE(allocate_for(c.layout, &user, &packed));
    // {b0, b1, packed misalignment}: 8-byte aligned ranges of whole groups
    // (grouped; whole tiles where the rows allow), then a range and a
    // packed pointer that break them.
    const std::vector<std::array<int64_t, 3>> ranges = {{0, -1, 0}, {8, n - 16, 8}, {16, 24, 0},
                                                        {3, n, 0},  {0, -1, 4},     {256, n - 512, 4}};
    for (const auto& [b0, b1, misalign] : ranges) {
      const int64_t end = b1 < 0 ? n : b1;
      if (end < b0) continue;  // a range for longer layouts
      c.b0 = b0;
      c.b1 = b1;
      c.packed_misalign = misalign;
      SCOPED_TRACE(describe(c, user, packed));
      const gpu::LaunchPlan plan = gpu::plan_launch(c.layout, user.dev + kGuard - c.layout.lowest_byte(),
                                                    packed.dev + kGuard + misalign, end - b0, props, b0);
      const bool want_groups = b0 % 8 == 0 && end % 8 == 0 && misalign % 8 == 0;
      EXPECT_EQ(plan.group > 1, want_groups) << "group " << plan.group;
      (plan.group > 1 ? grouped : ungrouped) += 1;
      const gpu::LaunchPlan unpack_plan =
          gpu::plan_launch(c.layout, user.dev + kGuard - c.layout.lowest_byte(), packed.dev + kGuard + misalign,
                           end - b0, props, b0, gpu::Grouping::unpack);
      int64_t want_tile = 1;  // the longest tile of 32 lanes x 8, 4 or 2 bytes that fits
      for (int64_t t = 32 * 8 / l.block; t >= 64 && want_tile == 1; t /= 2) {
        if (l.dims[0].count % t == 0 && b0 % t == 0 && end % t == 0) want_tile = t;
      }
      EXPECT_EQ(unpack_plan.group, want_tile);
      if (c.unpack) (unpack_plan.group > 1 ? tiled : untiled) += 1;
      std::string error;
      check_case(this, c, user, packed, rng, &error);
      EXPECT_EQ(error, "");
    }
    release(user);
    release(packed);
  }
  EXPECT_GT(grouped, 20);
  EXPECT_GT(ungrouped, 20);
  EXPECT_GE(tiled, 10);
  EXPECT_GT(untiled, 20);

  // The 64-bit index path: an outer count over 2^32 (a zero stride keeps
  // the source at 16 bytes), blocks [b0, b0 + 4096) far into it.
  Case c;
  c.layout.block = 1;
  c.layout.dims = {{8, 2}, {(int64_t{1} << 32) + 1024, 0}};
  c.unpack = false;
  c.b0 = int64_t{8} << 32;
  c.b1 = c.b0 + 4096;
  Buffer user, packed;
  ASSERT_TRUE(allocate(Kind::device, 16 + 2 * kGuard + 32, &user));
  ASSERT_TRUE(allocate(Kind::device, 4096 + 2 * kGuard + 32, &packed));
  const gpu::LaunchPlan plan = gpu::plan_launch(c.layout, user.dev + kGuard, packed.dev + kGuard, 4096, props, c.b0);
  EXPECT_EQ(plan.group, 8);
  SCOPED_TRACE(describe(c, user, packed));
  std::string error;
  check_case(this, c, user, packed, rng, &error);
  EXPECT_EQ(error, "");
  release(user);
  release(packed);
}

// Batches: many random layouts packed (unpacked) by one call, each in its
// own region of one user and one packed buffer; compared with the host
// engine part by part over the whole buffers (the gaps between regions are
// poison that must survive). Up to 40 parts: several launches of 16, mixed
// word sizes, layouts of more than 4 dimensions (launched alone).
TEST_F(PackDevice, BatchesMatchHostEngine) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0xBA7C4ull);
  const int iterations = static_cast<int>(env_u64("STRATA_TEST_ITERATIONS", 400));
  constexpr int64_t kBytes = 4 << 20;
  Rng rng(seed);
  Buffer user, packed;
  ASSERT_TRUE(allocate(Kind::device, kBytes, &user));
  ASSERT_TRUE(allocate(Kind::mapped, kBytes, &packed));
  int parts_seen = 0, wide = 0;
  for (int it = 0; it < iterations; ++it) {
    const int n = static_cast<int>(uniform(rng, 1, 40));
    std::vector<StridedBlock> layouts;
    std::vector<gpu::PackJob> jobs;
    std::vector<int64_t> user_at, packed_at;  // region origins: lowest byte, first packed byte
    int64_t u = kGuard, p = kGuard;
    for (int k = 0; k < n; ++k) {
      LayoutIR ir = random_ir(rng);
      fit(ir, 16 << 10, 48 << 10);
      StridedBlock b = strata::canonicalize(ir, 0);
      if (b.empty()) continue;
      const int64_t span = b.highest_byte() - b.lowest_byte();
      const int64_t misalign = uniform(rng, 0, 1) ? 0 : uniform(rng, 1, 15);
      if (u + span + misalign + kGuard > kBytes || p + b.packed_bytes() + 16 + kGuard > kBytes) break;
      user_at.push_back(u + misalign);
      packed_at.push_back(p + (uniform(rng, 0, 1) ? 0 : uniform(rng, 1, 15)));
      u += span + misalign + uniform(rng, 0, 64);
      p = packed_at.back() + b.packed_bytes() + uniform(rng, 0, 64);
      layouts.push_back(std::move(b));
    }
    for (size_t k = 0; k < layouts.size(); ++k) {
      const StridedBlock& b = layouts[k];
      gpu::PackJob j;
      j.layout = &layouts[k];
      j.user = user.dev + user_at[k] - b.lowest_byte();
      j.packed = packed.dev + packed_at[k];
      const int64_t nb = b.block_count();
      if (uniform(rng, 0, 3) == 0) {
        j.block_begin = uniform(rng, 0, nb);
        j.block_end = uniform(rng, j.block_begin, nb);
      }
      jobs.push_back(j);
      wide += b.dims.size() > 4 ? 1 : 0;
    }
    parts_seen += static_cast<int>(jobs.size());
    SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed) + " (iteration " + std::to_string(it) + ", " +
                 std::to_string(jobs.size()) + " layouts)");
    auto range_of = [&](size_t k) {
      const int64_t nb = layouts[k].block_count();
      return std::pair<int64_t, int64_t>{jobs[k].block_begin, jobs[k].block_end < 0 ? nb : jobs[k].block_end};
    };

    // --- pack ---
    Bytes src(kBytes);
    fill_random(src, rng);
    Bytes want(kBytes, static_cast<unsigned char>(rng()));
    to_device(user.dev, src);
    to_device(packed.dev, want);
    for (size_t k = 0; k < jobs.size(); ++k) {
      const auto [b0, b1] = range_of(k);
      strata::pack_host(layouts[k], src.data() + user_at[k] - layouts[k].lowest_byte(), want.data() + packed_at[k],
                        b0 * layouts[k].block, b1 * layouts[k].block);
    }
    ASSERT_EQ(gpu::pack_batch_async(jobs.data(), jobs.size(), stream_), Status::ok);
    ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
    Bytes got(kBytes);
    to_host(got, packed.dev);
    ASSERT_EQ(first_difference(want, got, 0, "batch pack output (packed buffer index)"), "");

    // --- unpack, the layouts that address no byte twice ---
    std::vector<gpu::PackJob> writers;
    for (size_t k = 0; k < jobs.size(); ++k) {
      if (!overlapping(layouts[k])) writers.push_back(jobs[k]);
    }
    Bytes pk(kBytes);
    fill_random(pk, rng);
    Bytes dst(kBytes, static_cast<unsigned char>(rng()));
    to_device(packed.dev, pk);
    to_device(user.dev, dst);
    for (size_t k = 0; k < jobs.size(); ++k) {
      if (overlapping(layouts[k])) continue;
      const auto [b0, b1] = range_of(k);
      strata::unpack_host(layouts[k], pk.data() + packed_at[k], dst.data() + user_at[k] - layouts[k].lowest_byte(),
                          b0 * layouts[k].block, b1 * layouts[k].block);
    }
    ASSERT_EQ(gpu::unpack_batch_async(writers.data(), writers.size(), stream_), Status::ok);
    ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
    to_host(got, user.dev);
    ASSERT_EQ(first_difference(dst, got, 0, "batch unpack destination (user buffer index)"), "");
  }
  release(user);
  release(packed);
  if (iterations >= 100) {
    EXPECT_GT(parts_seen, iterations * 10);
    EXPECT_GT(wide, 0) << "no layout of more than 4 dimensions";
  }
}

// The copy engine's boxes (gpu::copy_box_async over plan_box_copies) move
// the same bytes as the host engine: device to pinned host memory and to
// device memory, and back into a poisoned destination.
TEST_F(PackDevice, CopyEngineBoxesMatchHostEngine) {
  const uint64_t seed = env_u64("STRATA_TEST_SEED", 0xB0C5ull);
  const int iterations = static_cast<int>(env_u64("STRATA_TEST_ITERATIONS", 400));
  constexpr int64_t kBytes = 1 << 20;
  Rng rng(seed);
  Buffer user, host_packed, device_packed;
  ASSERT_TRUE(allocate(Kind::device, kBytes, &user));
  ASSERT_TRUE(allocate(Kind::mapped, kBytes, &host_packed));
  ASSERT_TRUE(allocate(Kind::device, kBytes, &device_packed));
  int planned = 0, three_d = 0;
  std::vector<strata::detail::BoxCopy> boxes;
  for (int it = 0; it < iterations; ++it) {
    LayoutIR ir = random_ir(rng);
    if (it % 4 == 3) {  // a subarray's shape: rows, slices a whole number of rows apart, maybe an outer dimension
      const int64_t block = uniform(rng, 1, 64);
      const int64_t rows = uniform(rng, 2, 20);
      const int64_t pitch = block + uniform(rng, 0, 64);
      const int64_t slices = uniform(rng, 2, 10);
      ir = LayoutIR{uniform(rng, 0, 64), block, {}};
      ir.repeat(rows, pitch).repeat(slices, pitch * (rows + uniform(rng, 0, 5)));
      if (uniform(rng, 0, 1)) ir.repeat(uniform(rng, 2, 3), ir.streams.back().stride * slices + uniform(rng, 0, 64));
    }
    fit(ir, 64 << 10, 256 << 10);
    const StridedBlock b = strata::canonicalize(ir, 0);
    if (b.empty() || !strata::detail::plan_box_copies(b, 16, &boxes)) continue;
    ++planned;
    for (const auto& box : boxes) three_d += box.depth > 1 ? 1 : 0;
    SCOPED_TRACE("replay: STRATA_TEST_SEED=" + std::to_string(seed) + " (iteration " + std::to_string(it) + ", " +
                 b.to_string() + ")");
    const int64_t at = kGuard + uniform(rng, 0, 15);  // the lowest byte's place in the user buffer
    char* base_dev = user.dev + at - b.lowest_byte();
    const int64_t packed_at = kGuard + uniform(rng, 0, 15);
    const bool to_pinned = it % 2 == 0;
    Buffer& packed = to_pinned ? host_packed : device_packed;
    // The address the copy engine is given: the host one for pinned memory.
    char* packed_ptr = (to_pinned ? static_cast<char*>(packed.alloc) : packed.dev) + packed_at;

    // --- pack ---
    Bytes src(kBytes);
    fill_random(src, rng);
    Bytes want(kBytes, static_cast<unsigned char>(rng()));
    to_device(user.dev, src);
    to_device(packed.dev, want);
    strata::pack_host(b, src.data() + at - b.lowest_byte(), want.data() + packed_at);
    for (const auto& box : boxes) ASSERT_EQ(gpu::copy_box_async(box, base_dev, packed_ptr, true, stream_), Status::ok);
    ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
    Bytes got(kBytes);
    to_host(got, packed.dev);
    ASSERT_EQ(first_difference(want, got, packed_at, "box pack output"), "");

    // --- unpack (layouts that address no byte twice) ---
    if (overlapping(b)) continue;
    Bytes pk(kBytes);
    fill_random(pk, rng);
    Bytes dst(kBytes, static_cast<unsigned char>(rng()));
    to_device(packed.dev, pk);
    to_device(user.dev, dst);
    strata::unpack_host(b, pk.data() + packed_at, dst.data() + at - b.lowest_byte());
    for (const auto& box : boxes) ASSERT_EQ(gpu::copy_box_async(box, base_dev, packed_ptr, false, stream_), Status::ok);
    ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
    to_host(got, user.dev);
    ASSERT_EQ(first_difference(dst, got, at, "box unpack destination"), "");
  }
  release(user);
  release(host_packed);
  release(device_packed);
  if (iterations >= 100) {
    EXPECT_GT(planned, iterations / 5);
    EXPECT_GT(three_d, 0) << "no three-dimensional box";
  }
}

// A box whose last slice ends at the end of its allocation: the runtimes
// describe the user side as whole slices of slice_pitch bytes, which would
// reach past the allocation; the copy must still work, touching only the
// box's rows.
TEST_F(PackDevice, CopyEngineBoxAtTheEndOfAnAllocation) {
  StridedBlock face;  // the last x face of a 70^3 grid of doubles, radius 3
  face.block = 24;
  face.dims = {Stream{64, 560}, Stream{64, 560 * 70}};
  face.offset = 70 * 70 * 70 * 8 - face.highest_byte();  // the face's last byte is the grid's last byte
  std::vector<strata::detail::BoxCopy> boxes;
  ASSERT_TRUE(strata::detail::plan_box_copies(face, 16, &boxes));
  ASSERT_EQ(boxes.size(), 1u);
  ASSERT_EQ(boxes[0].depth, 64);
  const int64_t bytes = face.highest_byte();
  Buffer grid, packed;
  ASSERT_TRUE(allocate(Kind::device, static_cast<size_t>(bytes), &grid));
  ASSERT_TRUE(allocate(Kind::mapped, static_cast<size_t>(face.packed_bytes()), &packed));
  Rng rng(7);
  Bytes src(static_cast<size_t>(bytes));
  fill_random(src, rng);
  to_device(grid.dev, src);
  ASSERT_EQ(gpu::copy_box_async(boxes[0], grid.dev, static_cast<char*>(packed.alloc), true, stream_), Status::ok);
  ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
  Bytes want(static_cast<size_t>(face.packed_bytes()));
  strata::pack_host(face, src.data(), want.data());
  Bytes got(want.size());
  std::memcpy(got.data(), packed.alloc, got.size());
  EXPECT_EQ(first_difference(want, got, 0, "face at the end"), "");
  release(grid);
  release(packed);
}

TEST_F(PackDevice, EmptyLayoutsAndRangesAreNoOps) {
  Buffer packed;
  ASSERT_TRUE(allocate(Kind::device, 4096, &packed));
  const Bytes poison(4096, 0xA5);
  to_device(packed.dev, poison);
  StridedBlock empty;
  EXPECT_EQ(gpu::pack_async(empty, nullptr, packed.dev, stream_), Status::ok);
  EXPECT_EQ(gpu::unpack_async(empty, packed.dev, nullptr, stream_), Status::ok);
  StridedBlock b;
  b.block = 8;
  b.dims = {{16, 64}};
  // Zero-block ranges touch nothing (the user pointer is never read).
  EXPECT_EQ(gpu::pack_async(b, reinterpret_cast<void*>(64), packed.dev, stream_, 5, 5), Status::ok);
  EXPECT_EQ(gpu::unpack_async(b, packed.dev, reinterpret_cast<void*>(64), stream_, 16, 16), Status::ok);
  // Ranges outside the layout are refused.
  EXPECT_EQ(gpu::pack_async(b, packed.dev, packed.dev, stream_, 3, 2), Status::invalid_argument);
  EXPECT_EQ(gpu::pack_async(b, packed.dev, packed.dev, stream_, 0, 17), Status::invalid_argument);
  EXPECT_EQ(gpu::pack_async(b, packed.dev, packed.dev, stream_, -1, 4), Status::invalid_argument);
  gpu::PackJob none{&b, reinterpret_cast<char*>(64), packed.dev, 7, 7};
  EXPECT_EQ(gpu::pack_batch_async(&none, 1, stream_), Status::ok);
  EXPECT_EQ(gpu::unpack_batch_async(nullptr, 0, stream_), Status::ok);
  gpu::PackJob outside{&b, packed.dev, packed.dev, 0, 17};
  EXPECT_EQ(gpu::pack_batch_async(&outside, 1, stream_), Status::invalid_argument);
  ASSERT_EQ(gpu::stream_synchronize(stream_), Status::ok);
  Bytes got(4096);
  to_host(got, packed.dev);
  EXPECT_TRUE(got == poison);
  release(packed);
}

}  // namespace
