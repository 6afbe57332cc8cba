// Power-of-two buckets of sizes and block lengths, shared by the
// interposer's models (interposer/model: host_model, device_model) and the
// mover's engine chooser (portability/mover/engine_choice).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace strata::numeric {

// floor(log2(v)) within [0, buckets): values below 2 land in bucket 0, the
// largest in the last bucket.
inline int log2_bucket(int64_t v, int buckets) {
  if (v < 2) return 0;
  const int b = 63 - __builtin_clzll(static_cast<unsigned long long>(v));  // NOLINT(google-runtime-int)
  return std::min(b, buckets - 1);
}

// log2(v) as a real number (v below 1 counts as 1), for distances between sizes.
inline double log2_of(int64_t v) { return std::log2(static_cast<double>(std::max<int64_t>(v, 1))); }

}  // namespace strata::numeric
