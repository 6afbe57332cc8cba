#include "bench/fused/bench_fused.hpp"

#include "portability/numeric/float16.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace strata_bench::fused {
namespace {

double value(const void* base, size_t i, strata::coll::DataType type) {
  const auto* b = static_cast<const unsigned char*>(base);
  uint16_t h = 0;
  float f = 0;
  switch (type) {
    case strata::coll::DataType::float32: std::memcpy(&f, b + 4 * i, 4); return f;
    case strata::coll::DataType::bfloat16: std::memcpy(&h, b + 2 * i, 2); return strata::numeric::bfloat16_to_float(h);
    case strata::coll::DataType::float16: std::memcpy(&h, b + 2 * i, 2); return strata::numeric::half_to_float(h);
    default: return NAN;
  }
}

}  // namespace

void fill_random(void* host, size_t count, strata::coll::DataType type, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  auto* b = static_cast<unsigned char*>(host);
  for (size_t i = 0; i < count; ++i) {
    const float v = unit(gen);
    if (type == strata::coll::DataType::float32) {
      std::memcpy(b + 4 * i, &v, 4);
    } else {
      const uint16_t h = type == strata::coll::DataType::bfloat16 ? strata::numeric::float_to_bfloat16(v)
                                                                  : strata::numeric::float_to_half(v);
      std::memcpy(b + 2 * i, &h, 2);
    }
  }
}

double relative_difference(const void* a, const void* b, size_t count, strata::coll::DataType type) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < count; ++i) {
    const double x = value(a, i, type), y = value(b, i, type);
    if (!std::isfinite(x) || !std::isfinite(y)) return INFINITY;
    worst = std::max(worst, std::fabs(x - y));
    scale = std::max(scale, std::fabs(y));
  }
  return scale > 0 ? worst / scale : worst;
}

strata::fused::AllreduceRmsnorm* Objects::get(const Case& c) {
  auto& f = objects_[{c.hidden, static_cast<int>(c.type)}];
  if (!f) {
    strata::fused::Config cfg;
    cfg.max_tokens = options_.max_tokens;
    cfg.hidden = c.hidden;
    cfg.type = c.type;
    cfg.memory = memory_;
    cfg.blocks = options_.blocks;
    auto r = strata::fused::AllreduceRmsnorm::create(MPI_COMM_WORLD, cfg);
    if (r) f = std::move(r).value();
  }
  return f.get();
}

}  // namespace strata_bench::fused
