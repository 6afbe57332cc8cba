#include "collectives/fused/fused_reference.hpp"

#include "collectives/host/reference_float.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

namespace strata_test::fused {

double value_of(DataType type, const void* base, size_t i) {
  const auto* b = static_cast<const unsigned char*>(base);
  switch (type) {
    case DataType::float32: {
      float f;
      std::memcpy(&f, b + 4 * i, 4);
      return f;
    }
    case DataType::bfloat16: {
      uint16_t h;
      std::memcpy(&h, b + 2 * i, 2);
      return bfloat16_value(h);
    }
    case DataType::float16: {
      uint16_t h;
      std::memcpy(&h, b + 2 * i, 2);
      return half_value(h);
    }
    default: return NAN;
  }
}

void store_value(DataType type, void* base, size_t i, double v) {
  auto* b = static_cast<unsigned char*>(base);
  switch (type) {
    case DataType::float32: {
      const auto f = static_cast<float>(v);
      std::memcpy(b + 4 * i, &f, 4);
      return;
    }
    case DataType::bfloat16: {
      const uint16_t h = bfloat16_round(v);
      std::memcpy(b + 2 * i, &h, 2);
      return;
    }
    case DataType::float16: {
      const uint16_t h = half_round(v);
      std::memcpy(b + 2 * i, &h, 2);
      return;
    }
    default: return;
  }
}

uint64_t seed_from_env(uint64_t fallback) {
  const char* s = std::getenv("STRATA_TEST_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 0) : fallback;
}

std::string Case::describe() const {
  std::ostringstream s;
  s << tokens << "x" << hidden << " " << strata::coll::to_string(type) << " ranks " << ranks << " eps " << epsilon
    << " seed " << seed;
  return s.str();
}

Inputs make_inputs(const Case& c) {
  const size_t n = c.tokens * c.hidden, e = strata::coll::size_of(c.type);
  std::mt19937_64 gen(c.seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Inputs in;
  in.x.assign(static_cast<size_t>(c.ranks), std::vector<unsigned char>(n * e));
  for (auto& x : in.x) {
    for (size_t i = 0; i < n; ++i) store_value(c.type, x.data(), i, unit(gen));
  }
  in.residual.resize(n * e);
  for (size_t i = 0; i < n; ++i) store_value(c.type, in.residual.data(), i, 2.0 * unit(gen));
  in.weight.resize(c.hidden * e);
  for (size_t i = 0; i < c.hidden; ++i) store_value(c.type, in.weight.data(), i, 1.0 + 0.5 * unit(gen));
  return in;
}

Reference reference(const Case& c, const Inputs& in) {
  Reference r;
  r.residual.resize(c.tokens * c.hidden);
  r.out.resize(c.tokens * c.hidden);
  for (size_t t = 0; t < c.tokens; ++t) {
    double squares = 0;
    for (size_t h = 0; h < c.hidden; ++h) {
      const size_t i = t * c.hidden + h;
      double v = value_of(c.type, in.residual.data(), i);
      for (const auto& x : in.x) v += value_of(c.type, x.data(), i);
      r.residual[i] = v;
      squares += v * v;
    }
    const double scale = 1.0 / std::sqrt(squares / static_cast<double>(c.hidden) + c.epsilon);
    for (size_t h = 0; h < c.hidden; ++h) {
      const size_t i = t * c.hidden + h;
      r.out[i] = r.residual[i] * scale * value_of(c.type, in.weight.data(), h);
    }
  }
  return r;
}

double relative_error(const Case& c, const std::vector<double>& ref, const void* got) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = value_of(c.type, got, i);
    if (!std::isfinite(g)) return INFINITY;  // a poisoned or overflowed element
    worst = std::max(worst, std::fabs(g - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return scale > 0 ? worst / scale : worst;
}

double tolerance(DataType type) {
  switch (type) {
    case DataType::bfloat16: return 1e-2;
    case DataType::float16: return 2e-3;
    default: return 1e-5;
  }
}

void poison(DataType type, void* base, size_t count) {
  auto* b = static_cast<unsigned char*>(base);
  if (type == DataType::float32) {
    const float nan = NAN;
    for (size_t i = 0; i < count; ++i) std::memcpy(b + 4 * i, &nan, 4);
    return;
  }
  const uint16_t nan = type == DataType::bfloat16 ? 0x7fc0 : 0x7e00;
  for (size_t i = 0; i < count; ++i) std::memcpy(b + 2 * i, &nan, 2);
}

const char* kind_name(strata::fused::proto::Kind kind) {
  switch (kind) {
    case strata::fused::proto::Kind::one_shot: return "one-shot";
    case strata::fused::proto::Kind::two_shot: return "two-shot";
    case strata::fused::proto::Kind::lamport: return "lamport";
  }
  return "?";
}

strata::fused::proto::Kind random_kind(uint64_t draw, bool lamport) {
  using strata::fused::proto::Kind;
  const uint64_t k = draw % (lamport ? 3 : 2);
  return k == 0 ? Kind::one_shot : (k == 1 ? Kind::two_shot : Kind::lamport);
}

void negative_zero_column(const Case& c, Inputs* in) {
  const size_t e = strata::coll::size_of(c.type);
  const uint32_t bits = e == 4 ? 0x80000000u : 0x8000u;  // the sign bit alone
  for (size_t r = 0; r < c.tokens; ++r) {
    for (auto& x : in->x) std::memcpy(x.data() + r * c.hidden * e, &bits, e);
    std::memcpy(in->residual.data() + r * c.hidden * e, &bits, e);
  }
}

GuardedBuffer::GuardedBuffer(size_t bytes, size_t misalign, const void* from)
    : bytes_(bytes), store_(bytes + 2 * kGuard + 32, kGuardByte) {
  const auto base = reinterpret_cast<uintptr_t>(store_.data());
  offset_ = (base + kGuard + 15) / 16 * 16 + misalign - base;
  if (from != nullptr && bytes > 0) std::memcpy(data(), from, bytes);
}

bool GuardedBuffer::guards_intact() const {
  for (size_t i = 0; i < store_.size(); ++i) {
    if ((i < offset_ || i >= offset_ + bytes_) && store_[i] != kGuardByte) return false;
  }
  return true;
}

}  // namespace strata_test::fused
