// float16 / bfloat16 conversions of collectives/host/float16.hpp against
// independent references (reference_float.hpp): every one of the 65536 bit
// patterns widened; rounding checked at every value, every midpoint between
// neighbours and one float ulp either side of both, plus a strided sweep over
// all 2^32 floats; and again with flush-to-zero / denormals-are-zero set.
#include "collectives/host/float16.hpp"
#include "reference_float.hpp"

#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using strata::coll::host::bfloat16_to_float;
using strata::coll::host::bits_to_float;
using strata::coll::host::float_to_bfloat16;
using strata::coll::host::float_to_bits;
using strata::coll::host::float_to_half;
using strata::coll::host::half_to_float;

bool half_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0; }
bool bf16_is_nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x007f) != 0; }

// Floats around every value of a 16-bit format with the given widening: the
// value, the midpoint to the next pattern up in magnitude, and one float ulp
// either side of both.
std::vector<float> probes(float (*widen)(uint16_t), uint16_t largest_finite) {
  std::vector<float> out;
  for (uint32_t m = 0; m <= largest_finite; ++m) {
    const double v = widen(static_cast<uint16_t>(m));
    // Past the largest finite value, the next step of the same exponent.
    const double next =
        m == largest_finite ? 2 * v - widen(static_cast<uint16_t>(m - 1)) : widen(static_cast<uint16_t>(m + 1));
    for (double sign : {1.0, -1.0}) {
      for (float x : {static_cast<float>(sign * v), static_cast<float>(sign * (v + next) / 2)}) {
        out.push_back(x);
        out.push_back(std::nextafter(x, INFINITY));
        out.push_back(std::nextafter(x, -INFINITY));
      }
    }
  }
  return out;
}

TEST(Float16, WidenEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float ours = half_to_float(static_cast<uint16_t>(h));
    const double ref = strata_test::half_value(static_cast<uint16_t>(h));
    if (half_is_nan(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(ours)) << std::hex << h;
      ASSERT_EQ(std::signbit(ours), (h & 0x8000) != 0) << std::hex << h;
      ASSERT_EQ(float_to_half(ours), h | 0x0200) << std::hex << h;  // payload kept, quieted
    } else {
      ASSERT_EQ(float_to_bits(ours), float_to_bits(static_cast<float>(ref))) << std::hex << h;
      ASSERT_EQ(float_to_half(ours), h) << std::hex << h;  // round trip
    }
  }
}

void check_half_rounding(const std::vector<float>& xs) {
  for (float x : xs) {
    const uint16_t ours = float_to_half(x);
    const uint16_t ref = strata_test::half_round(static_cast<double>(x));
    ASSERT_EQ(ours, ref) << "x = " << x << " (0x" << std::hex << float_to_bits(x) << ")";
  }
}

TEST(Float16, RoundAtEveryValueAndMidpoint) {
  check_half_rounding(probes(&half_to_float, 0x7bff));
  check_half_rounding({INFINITY, -INFINITY, 65504.f, 65519.99f, 65520.f, 65536.f, 1e10f, -1e10f, 0.f, -0.f,
                       bits_to_float(1), bits_to_float(0x80000001u), bits_to_float(0x007fffffu), 1e-8f, 2.98e-8f,
                       2.99e-8f, 5.96e-8f});
}

TEST(Float16, RoundStridedOverAllFloats) {
  std::vector<float> xs;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 251) {
    const float x = bits_to_float(static_cast<uint32_t>(u));
    if (std::isnan(x)) {
      const uint16_t h = float_to_half(x);
      ASSERT_TRUE(half_is_nan(h)) << std::hex << u;
      ASSERT_EQ((h & 0x8000) != 0, std::signbit(x)) << std::hex << u;
      continue;
    }
    xs.push_back(x);
  }
  check_half_rounding(xs);
}

TEST(BFloat16, WidenEveryPattern) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float ours = bfloat16_to_float(static_cast<uint16_t>(b));
    if (bf16_is_nan(static_cast<uint16_t>(b))) {
      ASSERT_TRUE(std::isnan(ours)) << std::hex << b;
      ASSERT_EQ(float_to_bfloat16(ours), b | 0x0040) << std::hex << b;
      continue;
    }
    const uint32_t m = b & 0x7fff;
    const double magnitude = m == 0x7f80 ? INFINITY : strata_test::bfloat16_magnitude(m);
    ASSERT_EQ(static_cast<double>(ours), (b & 0x8000) ? -magnitude : magnitude) << std::hex << b;
    ASSERT_EQ(float_to_bfloat16(ours), b) << std::hex << b;
  }
}

void check_bf16_rounding(const std::vector<float>& xs) {
  for (float x : xs) {
    ASSERT_EQ(float_to_bfloat16(x), strata_test::bfloat16_round(static_cast<double>(x)))
        << "x = " << x << " (0x" << std::hex << float_to_bits(x) << ")";
  }
}

TEST(BFloat16, RoundAtEveryValueAndMidpoint) {
  check_bf16_rounding(probes(&bfloat16_to_float, 0x7f7f));
  check_bf16_rounding({INFINITY, -INFINITY, bits_to_float(0x7f7fffffu), bits_to_float(0x7f7f8000u),
                       bits_to_float(0x7f7f7fffu), bits_to_float(1), bits_to_float(0x00008000u),
                       bits_to_float(0x00018000u), 0.f, -0.f});
}

TEST(BFloat16, RoundStridedOverAllFloats) {
  std::vector<float> xs;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4099) {
    const float x = bits_to_float(static_cast<uint32_t>(u));
    if (std::isnan(x)) {
      ASSERT_TRUE(bf16_is_nan(float_to_bfloat16(x))) << std::hex << u;
      continue;
    }
    xs.push_back(x);
  }
  check_bf16_rounding(xs);
}

// A process running with FTZ/DAZ (-ffast-math) gets the same float16 results:
// the conversions never read or produce a float subnormal.
TEST(Float16, SameUnderFlushToZero) {
  std::vector<float> xs = probes(&half_to_float, 0x7bff);
  std::vector<uint16_t> want(xs.size());
  std::vector<float> widened(65536);
  for (size_t i = 0; i < xs.size(); ++i) want[i] = float_to_half(xs[i]);
  for (uint32_t h = 0; h < 65536; ++h) widened[h] = half_to_float(static_cast<uint16_t>(h));
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);  // FTZ | DAZ
  std::vector<uint16_t> got(xs.size());
  std::vector<float> got_widened(65536);
  for (size_t i = 0; i < xs.size(); ++i) got[i] = float_to_half(xs[i]);
  for (uint32_t h = 0; h < 65536; ++h) got_widened[h] = half_to_float(static_cast<uint16_t>(h));
  _mm_setcsr(saved);
  for (size_t i = 0; i < xs.size(); ++i) {
    // A float subnormal input reads as zero under DAZ; it rounds to (signed) zero either way.
    ASSERT_EQ(got[i], want[i]) << "x = " << xs[i];
  }
  ASSERT_EQ(std::memcmp(got_widened.data(), widened.data(), widened.size() * sizeof(float)), 0);
}

}  // namespace
