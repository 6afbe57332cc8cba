// The rank-local half of the fused path, strata::fused::residual_rmsnorm on
// host buffers, against the float64 reference (every type, row lengths that
// do and do not fill 16-byte accesses, misaligned buffers, out == x, guard
// bytes, poisoned outputs); and the token split arithmetic against a naive
// search for the nearest admissible split.
#include <strata/fused.hpp>

#include "collectives/fused/fused_reference.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

using strata::coll::DataType;
using strata::fused::Memory;
using strata::fused::SplitConfig;
using strata::fused::Tensors;
using strata_test::fused::Case;

using Buffer = strata_test::fused::GuardedBuffer;

struct MathParam {
  DataType type;
  size_t tokens;
  size_t hidden;
  size_t misalign;  // bytes
  bool in_place;
};

class ResidualRmsnorm : public ::testing::TestWithParam<MathParam> {};

TEST_P(ResidualRmsnorm, AgainstFloat64) {
  const MathParam& p = GetParam();
  const char* env = std::getenv("STRATA_TEST_SEED");
  Case c;
  c.type = p.type;
  c.tokens = p.tokens;
  c.hidden = p.hidden;
  c.ranks = 1;
  c.seed = env != nullptr ? std::strtoull(env, nullptr, 0) : 0x51A7ull + p.hidden;
  SCOPED_TRACE(c.describe());
  const auto in = strata_test::fused::make_inputs(c);
  const auto ref = strata_test::fused::reference(c, in);
  const size_t e = strata::coll::size_of(c.type), bytes = c.tokens * c.hidden * e;
  Buffer x(bytes, p.misalign, in.x[0].data()), residual(bytes, p.misalign, in.residual.data()),
      weight(c.hidden * e, p.misalign, in.weight.data()), out(bytes, p.misalign);
  strata_test::fused::poison(c.type, out.data(), c.tokens * c.hidden);
  Tensors t;
  t.x = x.data();
  t.residual = residual.data();
  t.weight = weight.data();
  t.out = p.in_place ? x.data() : out.data();
  t.tokens = c.tokens;
  t.epsilon = c.epsilon;
  ASSERT_EQ(strata::fused::residual_rmsnorm(t, c.hidden, c.type, Memory::host), strata::Status::ok);
  EXPECT_LE(strata_test::fused::relative_error(c, ref.residual, residual.data()),
            strata_test::fused::tolerance(c.type));
  EXPECT_LE(strata_test::fused::relative_error(c, ref.out, t.out), strata_test::fused::tolerance(c.type));
  EXPECT_TRUE(x.guards_intact() && residual.guards_intact() && weight.guards_intact() && out.guards_intact());
  if (!p.in_place) {
    EXPECT_EQ(std::memcmp(x.data(), in.x[0].data(), bytes), 0) << "x changed";
  }
  // The residual is rounded once: exactly T(x + residual) for one rank.
  for (size_t i = 0; i < c.tokens * c.hidden; ++i) {
    const double want = strata_test::fused::value_of(c.type, in.x[0].data(), i) +
                        strata_test::fused::value_of(c.type, in.residual.data(), i);
    std::vector<unsigned char> rounded(e);
    strata_test::fused::store_value(c.type, rounded.data(), 0, want);
    ASSERT_EQ(std::memcmp(residual.data() + i * e, rounded.data(), e), 0) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ResidualRmsnorm,
    ::testing::Values(MathParam{DataType::bfloat16, 3, 64, 0, false}, MathParam{DataType::bfloat16, 17, 4096, 0, true},
                      MathParam{DataType::bfloat16, 2, 16384, 0, false}, MathParam{DataType::bfloat16, 5, 7, 2, false},
                      MathParam{DataType::float16, 4, 1000, 0, false}, MathParam{DataType::float16, 3, 40, 2, true},
                      MathParam{DataType::float32, 9, 16384, 0, false}, MathParam{DataType::float32, 2, 3, 4, false},
                      MathParam{DataType::float32, 1, 1, 0, true}));

TEST(ResidualRmsnormArguments, Refused) {
  std::vector<float> a(8, 1.0f), b(8, 1.0f), w(8, 1.0f);
  Tensors t;
  t.x = a.data();
  t.residual = b.data();
  t.weight = w.data();
  t.out = b.data();  // out == residual
  t.tokens = 1;
  EXPECT_EQ(strata::fused::residual_rmsnorm(t, 8, DataType::float32, Memory::host), strata::Status::invalid_argument);
  t.out = a.data();
  t.epsilon = -1.0f;
  EXPECT_EQ(strata::fused::residual_rmsnorm(t, 8, DataType::float32, Memory::host), strata::Status::invalid_argument);
  t.epsilon = 1e-6f;
  EXPECT_EQ(strata::fused::residual_rmsnorm(t, 8, DataType::int32, Memory::host), strata::Status::not_supported);
  t.weight = nullptr;
  EXPECT_EQ(strata::fused::residual_rmsnorm(t, 8, DataType::float32, Memory::host), strata::Status::invalid_argument);
}

// The nearest multiple of the wave to tokens/2 + offset among the
// admissible splits (first in [wave, tokens - 1]), by search.
size_t naive_first(size_t tokens, size_t wave, int64_t offset) {
  const double target = static_cast<double>(tokens / 2) + static_cast<double>(offset);
  size_t best = 0;
  double best_distance = 1e300;
  for (size_t f = wave; f < tokens; f += wave) {
    const double d = std::abs(static_cast<double>(f) - target);
    if (d < best_distance || (d == best_distance && f > best)) {  // ties: up, as rounding half up does
      best = f;
      best_distance = d;
    }
  }
  return best;
}

TEST(TokenSplit, NearestWaveMultiple) {
  for (size_t wave : {1, 64, 128, 256}) {
    for (int64_t offset : {-300, -64, 0, 37, 128, 511}) {
      for (size_t tokens = 1; tokens < 4200; tokens += (tokens < 600 ? 1 : 29)) {
        SplitConfig cfg;
        cfg.wave = wave;
        cfg.offset = offset;
        cfg.min_tokens = 512;
        const strata::fused::Split s = strata::fused::split_tokens(tokens, cfg);
        SCOPED_TRACE("tokens " + std::to_string(tokens) + " wave " + std::to_string(wave) + " offset " +
                     std::to_string(offset));
        ASSERT_EQ(s.first + s.second, tokens);
        if (tokens < 512) {
          EXPECT_FALSE(s.split());
          continue;
        }
        const size_t want = naive_first(tokens, wave, offset);
        if (want == 0) {
          EXPECT_FALSE(s.split()) << "no admissible split exists";
          continue;
        }
        // Below the first wave the split clamps to one wave; otherwise the nearest.
        const double target = static_cast<double>(tokens / 2) + static_cast<double>(offset);
        if (target < static_cast<double>(wave)) {
          EXPECT_EQ(s.first, wave);
        } else if (target >= static_cast<double>(tokens) - static_cast<double>(wave) / 2) {
          // Rounds to tokens or beyond: no second part is left.
          EXPECT_TRUE(!s.split() || s.first == want);
        } else {
          EXPECT_EQ(s.first, want);
        }
        if (s.split()) {
          EXPECT_EQ(s.first % wave, 0u);
          EXPECT_GE(s.second, 1u);
        }
      }
    }
  }
}

TEST(TokenSplit, DefaultsAsDocumented) {
  // STRATA_SPLIT_WAVE 256, STRATA_SPLIT_OFFSET 0, STRATA_SPLIT_MIN_TOKENS 1024 (the tests run without them set).
  EXPECT_FALSE(strata::fused::split_tokens(1023).split());
  EXPECT_EQ(strata::fused::split_tokens(1024).first, 512u);
  EXPECT_EQ(strata::fused::split_tokens(2048).first, 1024u);
  EXPECT_EQ(strata::fused::split_tokens(3000).first, 1536u);  // 1500 -> nearest multiple of 256
  EXPECT_EQ(strata::fused::split_tokens(8192).second, 4096u);
}

}  // namespace
