// Typed test values: reading and writing elements of every DataType as
// double (float16/bfloat16 through the independent references), random
// inputs suited to each op, and the seed.
#pragma once

#include "reference_float.hpp"

#include <strata/collectives.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>

namespace strata_test {

using strata::coll::DataType;
using strata::coll::ReduceOp;

constexpr DataType kTypes[] = {DataType::int32,   DataType::int64,   DataType::float32,
                               DataType::float64, DataType::float16, DataType::bfloat16};
constexpr ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max};

inline const char* name(DataType t) {
  switch (t) {
    case DataType::int32: return "int32";
    case DataType::int64: return "int64";
    case DataType::float32: return "float32";
    case DataType::float64: return "float64";
    case DataType::float16: return "float16";
    case DataType::bfloat16: return "bfloat16";
  }
  return "?";
}

inline const char* name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
  }
  return "?";
}

inline size_t elem_size(DataType t) {
  return t == DataType::int64 || t == DataType::float64 ? 8
                                                        : (t == DataType::float16 || t == DataType::bfloat16 ? 2 : 4);
}

inline bool is_float(DataType t) { return t != DataType::int32 && t != DataType::int64; }
inline bool is_16bit(DataType t) { return t == DataType::float16 || t == DataType::bfloat16; }

// Machine epsilon of the format (the result's precision for float16/bfloat16,
// which are rounded back after every combination).
inline double eps(DataType t) {
  switch (t) {
    case DataType::float32: return 0x1p-23;
    case DataType::float64: return 0x1p-52;
    case DataType::float16: return 0x1p-10;
    case DataType::bfloat16: return 0x1p-7;
    default: return 0;
  }
}

// The smallest positive subnormal: a floor for the absolute rounding error.
inline double tiny(DataType t) {
  switch (t) {
    case DataType::float16: return 0x1p-24;
    case DataType::bfloat16: return 0x1p-133;
    case DataType::float32: return 0x1p-149;
    default: return 0;
  }
}

inline double get(DataType t, const void* base, size_t i) {
  const unsigned char* p = static_cast<const unsigned char*>(base) + i * elem_size(t);
  switch (t) {
    case DataType::int32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DataType::int64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DataType::float32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DataType::float64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DataType::float16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return half_value(v);
    }
    case DataType::bfloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return bfloat16_value(v);
    }
  }
  return 0;
}

// Stores v rounded to the type (nearest even for the float formats).
inline void put(DataType t, void* base, size_t i, double v) {
  unsigned char* p = static_cast<unsigned char*>(base) + i * elem_size(t);
  switch (t) {
    case DataType::int32: {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DataType::int64: {
      const int64_t x = static_cast<int64_t>(v);
      std::memcpy(p, &x, 8);
      return;
    }
    case DataType::float32: {
      const float x = static_cast<float>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DataType::float64: std::memcpy(p, &v, 8); return;
    case DataType::float16: {
      const uint16_t x = half_round(v);
      std::memcpy(p, &x, 2);
      return;
    }
    case DataType::bfloat16: {
      const uint16_t x = bfloat16_round(v);
      std::memcpy(p, &x, 2);
      return;
    }
  }
}

// A random input for `op`, exactly representable in t: sums in [-1000, 1000]
// (integers) or [-1, 1]; products of small integers or of magnitudes in
// [0.5, 2] (8 ranks stay far from overflow, also in float16); min/max over a
// wide range.
inline void fill_random(DataType t, ReduceOp op, void* base, size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (size_t i = 0; i < n; ++i) {
    double v = 0;
    const double u = unit(rng);
    if (!is_float(t)) {
      switch (op) {
        case ReduceOp::sum: v = static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000); break;
        case ReduceOp::prod: v = static_cast<double>(static_cast<int64_t>(rng() % 5) - 2); break;
        default: v = static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000); break;
      }
    } else {
      switch (op) {
        case ReduceOp::sum: v = u; break;
        case ReduceOp::prod: v = (u < 0 ? -1 : 1) * (0.5 + 1.5 * std::fabs(unit(rng))); break;
        default: v = 100 * u; break;
      }
    }
    if (t == DataType::bfloat16) {  // truncate through float: exact, and fast
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      const uint16_t b = static_cast<uint16_t>(bits >> 16);
      std::memcpy(static_cast<unsigned char*>(base) + 2 * i, &b, 2);
    } else {
      put(t, base, i, v);
    }
  }
}

// STRATA_TEST_SEED, or a fixed default so runs are reproducible.
inline uint64_t test_seed() {
  const char* s = std::getenv("STRATA_TEST_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 10) : 20261121u;
}

}  // namespace strata_test
