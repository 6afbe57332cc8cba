// IEEE binary16 (float16) and bfloat16 <-> binary32 conversions, round to
// nearest even, written without branches on the value so that the reduction
// loops over them vectorise (every case is computed and one is selected).
//
// Why not the F16C instructions or _Float16: the host library is built for
// plain x86-64 (no -mf16c) and must behave the same in every process it is
// loaded into; these routines depend only on integer arithmetic and two exact
// float operations. They never create or read a float subnormal, so a process
// that runs with flush-to-zero / denormals-are-zero (-ffast-math) gets the
// same results.
//
// Annotated for host and device (portability/setup/host_device.hpp): the
// host collectives, the fused AllReduce-RMSNorm kernels (CUDA and HIP) and
// their host reference all convert with these, so the paths agree bit for
// bit. __builtin_memcpy is the bit cast that every one of those compilers
// accepts in device code.
#pragma once

#include "portability/setup/host_device.hpp"

#include <cstdint>

namespace strata::numeric {

STRATA_HOST_DEVICE inline float bits_to_float(uint32_t u) noexcept {
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}

STRATA_HOST_DEVICE inline uint32_t float_to_bits(float f) noexcept {
  uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}

// binary16 -> binary32: exact for every bit pattern (NaN payloads kept).
STRATA_HOST_DEVICE inline float half_to_float(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;  // exponent and mantissa
  // Normal: move the fields into place and rebias the exponent (127 - 15).
  const uint32_t normal = (em << 13) + (112u << 23);
  // Infinity and NaN: exponent 31 becomes 255.
  const uint32_t special = (em << 13) + (224u << 23);
  // Subnormal (and zero): em * 2^-24. The float 2^-1 * (1 + em * 2^-23)
  // minus 0.5 is exactly that value and a normal float (or +0).
  const uint32_t subnormal = float_to_bits(bits_to_float(em | (126u << 23)) - 0.5f);
  const uint32_t magnitude = em < 0x0400u ? subnormal : (em >= 0x7c00u ? special : normal);
  return bits_to_float(sign | magnitude);
}

// binary32 -> binary16, round to nearest even; overflow gives infinity, NaN a
// quiet NaN with the top payload bits kept.
STRATA_HOST_DEVICE inline uint16_t float_to_half(float f) noexcept {
  const uint32_t u = float_to_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  // Normal range: rebias, then add half an ulp minus one plus the lowest kept
  // bit (ties go to even); a carry into the exponent is the correct rounding,
  // up to 0x7c00 (infinity) for values from 65520 on.
  const uint32_t rebiased = a - (112u << 23);
  const uint32_t normal = (rebiased + 0x0fffu + ((rebiased >> 13) & 1u)) >> 13;
  // Below 2^-14 the result is subnormal: adding 0.5 (whose ulp is 2^-24, the
  // binary16 subnormal step) rounds |f| to a multiple of 2^-24 in the FPU's
  // nearest-even mode; the mantissa bits are then the binary16 pattern
  // (0x400, the smallest normal, when it rounds up). A float subnormal input
  // rounds to zero either way, so denormals-are-zero does not matter.
  const uint32_t subnormal = float_to_bits(bits_to_float(a) + 0.5f) - (126u << 23);
  const uint32_t nan = 0x7e00u | ((a >> 13) & 0x03ffu);
  uint32_t magnitude = a < 0x38800000u ? subnormal : normal;
  magnitude = a >= 0x47800000u ? 0x7c00u : magnitude;  // >= 65536: infinity
  magnitude = a > 0x7f800000u ? nan : magnitude;
  return static_cast<uint16_t>(sign | magnitude);
}

// bfloat16 -> binary32: the top half of a float, exact.
STRATA_HOST_DEVICE inline float bfloat16_to_float(uint16_t b) noexcept {
  return bits_to_float(static_cast<uint32_t>(b) << 16);
}

// binary32 -> bfloat16, round to nearest even; a carry into the exponent is
// the correct rounding (up to infinity); NaN stays a quiet NaN.
STRATA_HOST_DEVICE inline uint16_t float_to_bfloat16(float f) noexcept {
  const uint32_t u = float_to_bits(f);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = (u >> 16) | 0x0040u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

}  // namespace strata::numeric
