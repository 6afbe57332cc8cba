// Power-of-two buckets of sizes and block lengths, shared by the models
// (host_model, device_model) and the engine chooser (transfer/engine_choice).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace strata::interposer {

// floor(log2(v)) within [0, buckets): values below 2 land in bucket 0, the
// largest in the last bucket.
inline int log2_bucket(int64_t v, int buckets) {
  int b = 0;
  while (b + 1 < buckets && (int64_t{1} << (b + 1)) <= v) ++b;
  return b;
}

// log2(v) as a real number (v below 1 counts as 1), for distances between sizes.
inline double log2_of(int64_t v) { return std::log2(static_cast<double>(std::max<int64_t>(v, 1))); }

}  // namespace strata::interposer
