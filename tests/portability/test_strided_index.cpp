// The shared index math of every pack kernel (host, CUDA, HIP, Kokkos):
// block_offset, and the 32-bit fast division path the device kernels use,
// checked against plain 64-bit arithmetic.
#include "portability/layout/strided_index.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

namespace {

using strata::Stream;
using strata::detail::block_offset;
using strata::detail::block_offset32;
using strata::detail::fast_divide;
using strata::detail::FastDivisor;
using strata::detail::make_fast_divisor;
using strata::detail::StridedIndex;

uint64_t seed() {
  const char* s = std::getenv("STRATA_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 0) : 0x51DEull;
}

TEST(FastDivide, MatchesIntegerDivision) {
  std::mt19937_64 rng(seed());
  std::vector<uint32_t> divisors = {1, 2, 3, 5, 7, 10, 64, 100, 1000, 65535, 65536, 1u << 31, 0xFFFFFFFFu};
  for (int i = 0; i < 200; ++i) divisors.push_back(static_cast<uint32_t>(rng() % 0xFFFFFFFFu) + 1);
  for (uint32_t d : divisors) {
    const FastDivisor f = make_fast_divisor(d);
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 0x7FFFFFFFu, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
      ASSERT_EQ(fast_divide(n, f), n / d) << n << " / " << d << " (seed " << seed() << ")";
    }
    for (int k = 0; k < 2000; ++k) {
      const uint32_t n = static_cast<uint32_t>(rng());
      ASSERT_EQ(fast_divide(n, f), n / d) << n << " / " << d << " (seed " << seed() << ")";
    }
  }
}

TEST(BlockOffset, ThirtyTwoBitPathMatchesTheGeneralOne) {
  std::mt19937_64 rng(seed() ^ 0x77);
  for (int trial = 0; trial < 2000; ++trial) {
    const int ndims = 1 + static_cast<int>(rng() % StridedIndex::kMaxDims);
    std::vector<Stream> dims(static_cast<size_t>(ndims));
    std::vector<FastDivisor> divisors(static_cast<size_t>(ndims));
    uint64_t blocks = 1;
    for (auto& d : dims) {
      d.count = 1 + static_cast<int64_t>(rng() % 9);
      d.stride = static_cast<int64_t>(rng() % 20001) - 10000;  // negative and zero strides too
      blocks *= static_cast<uint64_t>(d.count);
    }
    if (blocks > 0xFFFFFFFFull) continue;
    for (int d = 0; d < ndims; ++d)
      divisors[static_cast<size_t>(d)] = make_fast_divisor(static_cast<uint32_t>(dims[static_cast<size_t>(d)].count));
    const int64_t offset = static_cast<int64_t>(rng() % 1000) - 500;
    for (int k = 0; k < 50; ++k) {
      const uint64_t b = rng() % blocks;
      ASSERT_EQ((block_offset32<StridedIndex::kMaxDims>(offset, dims.data(), divisors.data(), ndims,
                                                        static_cast<uint32_t>(b))),
                block_offset(offset, dims.data(), ndims, static_cast<int64_t>(b)))
          << "trial " << trial << " block " << b << " (seed " << seed() << ")";
    }
  }
}

}  // namespace
