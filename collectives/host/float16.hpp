// The host collectives' float16 / bfloat16 conversions: those of
// portability/numeric/float16.hpp (shared with the device kernels).
#pragma once

#include "portability/numeric/float16.hpp"

namespace strata::coll::host {

using numeric::bfloat16_to_float;
using numeric::bits_to_float;
using numeric::float_to_bfloat16;
using numeric::float_to_bits;
using numeric::float_to_half;
using numeric::half_to_float;

}  // namespace strata::coll::host
