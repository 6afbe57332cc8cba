// Independent references for float16 and bfloat16 rounding, for the tests.
//
// float16: the compiler's _Float16 (g++ 12 on x86-64 converts through libgcc's
// soft-float routines without -mf16c), so it shares nothing with
// collectives/host/float16.hpp.
// bfloat16: chosen by value, not by bit tricks: the two neighbouring
// bfloat16 values of x are computed, and the nearer one taken (ties to the
// even pattern).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace strata_test {

inline double half_value(uint16_t h) {
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<double>(x);
}

inline uint16_t half_round(double v) {
  const _Float16 x = static_cast<_Float16>(v);
  uint16_t h;
  std::memcpy(&h, &x, 2);
  return h;
}

inline double bfloat16_value(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return static_cast<double>(f);
}

// The magnitude of the bfloat16 pattern m (no sign), continuing past the
// largest finite value as if the exponent went on (0x7f80 -> 2^128), which
// is where rounding to infinity is decided.
inline double bfloat16_magnitude(uint32_t m) {
  const int exponent = static_cast<int>(m >> 7);
  const double mantissa = static_cast<double>(m & 0x7f);
  if (exponent == 0) return std::ldexp(mantissa, -133);  // subnormal: m * 2^-133
  return std::ldexp(1.0 + mantissa / 128.0, exponent - 127);
}

// Round a finite double (or an infinity) to bfloat16, nearest even.
inline uint16_t bfloat16_round(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | 0x7f80;
  // Largest pattern whose magnitude is <= a.
  uint32_t lo = 0, hi = 0x7f80;  // invariant: magnitude(lo) <= a < magnitude(hi), or a >= 2^128
  if (a >= bfloat16_magnitude(hi)) return sign | 0x7f80;
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (bfloat16_magnitude(mid) <= a)
      lo = mid;
    else
      hi = mid;
  }
  const double dlo = a - bfloat16_magnitude(lo), dhi = bfloat16_magnitude(hi) - a;
  uint32_t m = dlo < dhi ? lo : (dhi < dlo ? hi : ((lo & 1) ? hi : lo));
  return static_cast<uint16_t>(sign | m);
}

}  // namespace strata_test
