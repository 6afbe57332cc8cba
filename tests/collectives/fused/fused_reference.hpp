// The fused AllReduce-RMSNorm's oracle: inputs made from a seed (every rank
// can make every rank's), the same math in float64 from the stored values,
// and norm-wise relative errors. Values are read and rounded with the
// independent references of tests/collectives/host/reference_float.hpp
// (_Float16, bfloat16 chosen by value), not with Strata's conversions.
#pragma once

#include <strata/collectives.hpp>

#include "collectives/fused/protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strata_test::fused {

using strata::coll::DataType;

double value_of(DataType type, const void* base, size_t i);
void store_value(DataType type, void* base, size_t i, double v);  // rounds to nearest even

struct Case {
  size_t tokens = 1;
  size_t hidden = 64;
  DataType type = DataType::bfloat16;
  float epsilon = 1e-5f;
  int ranks = 2;
  uint64_t seed = 1;
  std::string describe() const;
};

struct Inputs {
  std::vector<std::vector<unsigned char>> x;  // per rank, [tokens][hidden]
  std::vector<unsigned char> residual;        // the same on every rank
  std::vector<unsigned char> weight;
};
Inputs make_inputs(const Case& c);

struct Reference {
  std::vector<double> residual;  // residual + sum of x, in float64
  std::vector<double> out;       // its RMSNorm times weight, in float64
};
Reference reference(const Case& c, const Inputs& in);

// One call of a protocol test: the case, its inputs and float64 result,
// and how the call runs.
struct Plan {
  Case c;
  Inputs in;
  Reference ref;
  strata::fused::proto::Kind kind = strata::fused::proto::Kind::one_shot;
  int budget = 1;         // blocks asked for
  int lag = 1;            // Lamport: rows posted ahead of the one taken (0: none)
  int post_slices = 1;    // Lamport: blocks posting each row group (proto::Args::post_slices)
  bool in_place = false;  // out == x
};

// "one-shot", "two-shot", "lamport".
const char* kind_name(strata::fused::proto::Kind kind);
// A random kind; lamport only where `lamport` (its sets fit).
strata::fused::proto::Kind random_kind(uint64_t draw, bool lamport);
// Element 0 of every row: negative zero in every rank's x and in the
// residual (the values a Lamport slot must not mistake for empty, and whose
// sign must come out the same on every rank).
void negative_zero_column(const Case& c, Inputs* in);

// STRATA_TEST_SEED when set (a replay), else `fallback`.
uint64_t seed_from_env(uint64_t fallback);

// max |got - ref| / max |ref| over the tensor.
double relative_error(const Case& c, const std::vector<double>& ref, const void* got);
// The bound the issue sets: bfloat16 1e-2, float16 2e-3, float32 1e-5.
double tolerance(DataType type);

// A pattern no correct result holds (NaN in every element).
void poison(DataType type, void* base, size_t count);

// Host bytes with guard bytes on both sides, 16-byte aligned plus
// `misalign` bytes (to reach the element-by-element paths), optionally
// filled from `from`.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t bytes, size_t misalign, const void* from = nullptr);
  unsigned char* data() { return store_.data() + offset_; }
  bool guards_intact() const;

 private:
  static constexpr size_t kGuard = 64;
  static constexpr unsigned char kGuardByte = 0xA5;
  size_t bytes_;
  std::vector<unsigned char> store_;
  size_t offset_;
};

}  // namespace strata_test::fused
