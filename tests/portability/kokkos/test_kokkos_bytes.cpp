// strata::kokkos::pack / unpack of arbitrary canonical blocks (not only
// what a View produces) against a naive byte loop with its own odometer:
// 0-14 dimensions (more than a device launch takes: the launcher splits),
// counts of 1 and more, negative, zero and overlapping strides, odd block
// lengths, base and packed pointers misaligned by 0-15 bytes so that every
// word size runs, both index paths of the device kernel, poisoned outputs
// with guards, inputs checked unchanged. Unpack is checked where no byte is
// addressed twice (elsewhere which value lands is unspecified, as in MPI).
// STRATA_TEST_SEED=<seed> replays a run.
#include "portability/kokkos/kokkos_test_util.hpp"

#include "portability/kokkos/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace strata_test;
namespace sk = strata::kokkos;
using strata::Stream;
using strata::StridedBlock;

constexpr int64_t kGuard = 32;

uint64_t master_seed() {
  static const uint64_t seed = [] {
    const uint64_t s = test_seed();
    std::printf("test_kokkos_bytes seed %llu (replay: STRATA_TEST_SEED=%llu)\n", static_cast<unsigned long long>(s),
                static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

// A random block whose lowest byte is at `offset` >= 0 from the base.
StridedBlock random_block(Rng& rng) {
  StridedBlock b;
  const int64_t sizes[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 100, 128, 256};
  b.block = uniform(rng, 0, 3) == 0 ? uniform(rng, 1, 300) : sizes[uniform(rng, 0, 14)];
  const int nd = static_cast<int>(uniform(rng, 0, 10) == 0 ? uniform(rng, 12, 14) : uniform(rng, 0, 5));
  int64_t blocks = 1;
  int64_t span = b.block;
  for (int d = 0; d < nd; ++d) {
    const int64_t count = std::min<int64_t>(uniform(rng, 1, nd > 8 ? 2 : 9), std::max<int64_t>(1, 4096 / blocks));
    int64_t stride = 0;
    switch (uniform(rng, 0, 5)) {
      case 0:
        stride = 0;  // the same bytes again
        break;
      case 1:
        stride = -span - uniform(rng, 0, 16);  // backwards
        break;
      case 2:
        stride = uniform(rng, 1, span);  // overlapping
        break;
      default:
        stride = span + uniform(rng, 0, 40);  // ordinary, with a gap
        break;
    }
    b.dims.push_back({count, stride});
    blocks *= count;
    span = std::max<int64_t>(span, std::abs(stride) * count + b.block);
  }
  b.offset = 0;
  b.offset = -b.lowest_byte() + uniform(rng, 0, 9);
  b.extent = b.highest_byte();
  return b;
}

// The naive oracle: block k's start by an odometer over the dimensions.
std::vector<int64_t> block_starts(const StridedBlock& b) {
  std::vector<int64_t> starts;
  const int64_t n = b.block_count();
  std::vector<int64_t> idx(b.dims.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t at = b.offset;
    for (size_t d = 0; d < b.dims.size(); ++d) at += idx[d] * b.dims[d].stride;
    starts.push_back(at);
    for (size_t d = 0; d < b.dims.size(); ++d) {
      if (++idx[d] < b.dims[d].count) break;
      idx[d] = 0;
    }
  }
  return starts;
}

template <class Where>
void check_random_blocks(int cases, const std::vector<sk::Kernel>& kernels, bool wide) {
  using Space = typename Where::space;
  using Mem = typename Space::memory_space;
  Rng rng(master_seed() + (wide ? 17 : 0));
  Space space;
  strata::kokkos::detail::set_force_wide_index(wide);
  // STRATA_TEST_ITERATIONS caps the cases (the sanitizer stage sets it).
  if (const char* cap = std::getenv("STRATA_TEST_ITERATIONS")) cases = std::min(cases, std::atoi(cap));
  for (int c = 0; c < cases; ++c) {
    const StridedBlock b = random_block(rng);
    const int64_t packed_bytes = b.packed_bytes();
    const int64_t base_bytes = b.highest_byte() + 16;
    const int64_t base_shift = uniform(rng, 0, 15);
    const int64_t packed_shift = uniform(rng, 0, 15);
    std::ostringstream what;
    what << b.to_string() << " base+" << base_shift << " packed+" << packed_shift << " case " << c
         << (wide ? " (64-bit index)" : "") << "; replay: STRATA_TEST_SEED=" << master_seed();
    SCOPED_TRACE(what.str());

    Bytes source(static_cast<size_t>(base_bytes + 16));
    fill_random(source.data(), source.size(), rng);
    const std::vector<int64_t> starts = block_starts(b);
    Bytes want;
    for (int64_t s : starts) {
      want.insert(want.end(), source.begin() + base_shift + s, source.begin() + base_shift + s + b.block);
    }
    ASSERT_EQ(static_cast<int64_t>(want.size()), packed_bytes);
    std::vector<char> seen(static_cast<size_t>(base_bytes), 0);  // is any byte addressed twice?
    bool unique = true;
    for (size_t k = 0; k < starts.size() && unique; ++k) {
      for (int64_t j = 0; j < b.block && unique; ++j) {
        char& hit = seen[static_cast<size_t>(starts[k] + j)];
        unique = hit == 0;
        hit = 1;
      }
    }

    Kokkos::View<unsigned char*, Mem> base("base", source.size());
    Kokkos::View<unsigned char*, Mem> packed("packed", static_cast<size_t>(packed_bytes + 2 * kGuard + 16));
    unsigned char* user = base.data() + base_shift;
    unsigned char* out = packed.data() + kGuard + packed_shift;
    for (sk::Kernel kernel : kernels) {
      upload<Mem>(base.data(), source);
      const Bytes poison(packed.extent(0), static_cast<unsigned char>(0xc3 ^ c));
      upload<Mem>(packed.data(), poison);
      ASSERT_EQ(sk::pack(space, b, user, out, sk::PackOptions{kernel}), strata::Status::ok);
      space.fence();
      const Bytes got = download<Mem>(packed.data(), packed.extent(0));
      const size_t lead = static_cast<size_t>(kGuard + packed_shift);
      for (size_t i = 0; i < lead; ++i) ASSERT_EQ(got[i], poison[i]) << "guard before, byte " << i;
      for (size_t i = lead + want.size(); i < got.size(); ++i) ASSERT_EQ(got[i], poison[i]) << "guard after " << i;
      ASSERT_EQ(first_difference(want.data(), got.data() + lead, want.size(), "pack"), "")
          << "kernel " << static_cast<int>(kernel);
      ASSERT_EQ(first_difference(source.data(), download<Mem>(base.data(), source.size()).data(), source.size(),
                                 "pack input"),
                "");
      if (!unique) continue;
      Bytes incoming(want.size());
      fill_random(incoming.data(), incoming.size(), rng);
      upload<Mem>(out, incoming);
      ASSERT_EQ(sk::unpack(space, b, out, user, sk::PackOptions{kernel}), strata::Status::ok);
      space.fence();
      Bytes expect = source;
      for (size_t k = 0; k < starts.size(); ++k) {
        std::copy(incoming.begin() + static_cast<int64_t>(k) * b.block,
                  incoming.begin() + static_cast<int64_t>(k + 1) * b.block, expect.begin() + base_shift + starts[k]);
      }
      ASSERT_EQ(
          first_difference(expect.data(), download<Mem>(base.data(), source.size()).data(), expect.size(), "unpack"),
          "")
          << "kernel " << static_cast<int>(kernel);
    }
  }
  strata::kokkos::detail::set_force_wide_index(false);
}

template <class Where>
std::vector<sk::Kernel> kernels_of() {
  if (std::is_same<Where, Host>::value) return {sk::Kernel::host_engine, sk::Kernel::words};
  return {sk::Kernel::automatic, sk::Kernel::words};  // the native kernels on the space's stream, the Kokkos one
}

template <class Where>
class KokkosBytes : public testing::Test {};
using Spaces = testing::Types<Host, Device>;
TYPED_TEST_SUITE(KokkosBytes, Spaces, SpaceNames);

TYPED_TEST(KokkosBytes, RandomBlocks) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  check_random_blocks<TypeParam>(1500, kernels_of<TypeParam>(), false);
}

TYPED_TEST(KokkosBytes, RandomBlocksWideIndex) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  check_random_blocks<TypeParam>(300, {sk::Kernel::words}, true);
}

TYPED_TEST(KokkosBytes, BadArguments) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  typename TypeParam::space space;
  StridedBlock b;
  b.block = 8;
  b.dims = {{4, 16}};
  unsigned char dummy[64] = {};
  EXPECT_EQ(sk::pack(space, b, nullptr, dummy), strata::Status::invalid_argument);
  StridedBlock negative = b;
  negative.block = -1;
  EXPECT_EQ(sk::pack(space, negative, dummy, dummy), strata::Status::invalid_argument);
  StridedBlock empty;  // nothing to move: fine with null pointers
  EXPECT_EQ(sk::pack(space, empty, nullptr, nullptr), strata::Status::ok);
  EXPECT_EQ(sk::unpack(space, empty, nullptr, nullptr), strata::Status::ok);
  if (std::is_same<TypeParam, Device>::value) {
    // The host engine does not run on a device space.
    EXPECT_EQ(sk::pack(space, b, dummy, dummy, sk::PackOptions{sk::Kernel::host_engine}),
              strata::Status::not_supported);
  }
}

}  // namespace
