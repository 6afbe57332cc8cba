// reduce_local for every type x op against a naive loop in double precision
// (rounded once to the type: for float32, float16 and bfloat16 the double
// result rounded to the format equals the format's correctly rounded
// operation, since double carries more than twice their precision plus two
// bits; integers wrap). Lengths cover the vector loop's body and tail; the
// 3-operand combine and its two in-place forms agree; special values
// (overflow to infinity, infinities, subnormals) are included for the float
// formats. Also the MPI type and op mapping.
#include "collectives/host/internal.hpp"
#include "test_values.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using strata::coll::host::reduce_local;
using strata::coll::host::detail::combine;
using namespace strata_test;

double apply(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::prod: return a * b;
    case ReduceOp::min: return b < a ? b : a;
    case ReduceOp::max: return a < b ? b : a;
  }
  return 0;
}

// The expected element: integers wrap as two's complement.
void expect_element(DataType t, ReduceOp op, const void* a, const void* b, size_t i, void* out) {
  if (t == DataType::int32 || t == DataType::int64) {
    const bool wide = t == DataType::int64;
    int64_t x = 0, y = 0;
    if (wide) {
      std::memcpy(&x, static_cast<const char*>(a) + 8 * i, 8);
      std::memcpy(&y, static_cast<const char*>(b) + 8 * i, 8);
    } else {
      int32_t x32, y32;
      std::memcpy(&x32, static_cast<const char*>(a) + 4 * i, 4);
      std::memcpy(&y32, static_cast<const char*>(b) + 4 * i, 4);
      x = x32;
      y = y32;
    }
    uint64_t r = 0;
    switch (op) {
      case ReduceOp::sum: r = static_cast<uint64_t>(x) + static_cast<uint64_t>(y); break;
      case ReduceOp::prod: r = static_cast<uint64_t>(x) * static_cast<uint64_t>(y); break;
      case ReduceOp::min: r = static_cast<uint64_t>(std::min(x, y)); break;
      case ReduceOp::max: r = static_cast<uint64_t>(std::max(x, y)); break;
    }
    if (wide) {
      std::memcpy(static_cast<char*>(out) + 8 * i, &r, 8);
    } else {
      const uint32_t r32 = static_cast<uint32_t>(r);
      std::memcpy(static_cast<char*>(out) + 4 * i, &r32, 4);
    }
    return;
  }
  put(t, out, i, apply(op, get(t, a, i), get(t, b, i)));
}

// Special values for the float formats, placed at the start of a and b.
void add_specials(DataType t, std::vector<unsigned char>& a, std::vector<unsigned char>& b) {
  if (!is_float(t)) {
    if (t == DataType::int32) {
      const int32_t big = std::numeric_limits<int32_t>::max(), small = std::numeric_limits<int32_t>::min();
      std::memcpy(a.data(), &big, 4);
      std::memcpy(b.data(), &big, 4);  // wraps for sum and prod
      std::memcpy(a.data() + 4, &small, 4);
      std::memcpy(b.data() + 4, &small, 4);
    }
    return;
  }
  const double huge =
      t == DataType::float16 ? 60000.0 : (t == DataType::bfloat16 ? 3e38 : (t == DataType::float32 ? 3e38 : 1.7e308));
  const double specials_a[] = {huge, -huge, INFINITY, -INFINITY, tiny(t), 3 * tiny(t), -tiny(t), 0.0, 1.0, 256.0};
  const double specials_b[] = {huge, -huge, 1.0, 2.0, tiny(t), tiny(t), tiny(t), -0.0, 0x1p-11, 1.0};
  for (size_t i = 0; i < std::size(specials_a); ++i) {
    put(t, a.data(), i, specials_a[i]);
    put(t, b.data(), i, specials_b[i]);
  }
}

bool same_element(DataType t, const void* x, const void* y, size_t i) {
  const size_t es = elem_size(t);
  if (std::memcmp(static_cast<const char*>(x) + i * es, static_cast<const char*>(y) + i * es, es) == 0) return true;
  return is_float(t) && std::isnan(get(t, x, i)) && std::isnan(get(t, y, i));
}

class ReduceLocal : public ::testing::TestWithParam<std::tuple<DataType, ReduceOp>> {};

TEST_P(ReduceLocal, MatchesDoubleLoop) {
  const DataType t = std::get<0>(GetParam());
  const ReduceOp op = std::get<1>(GetParam());
  std::mt19937_64 rng(test_seed() + static_cast<uint64_t>(t) * 16 + static_cast<uint64_t>(op));
  for (size_t n : {size_t{1}, size_t{3}, size_t{17}, size_t{64}, size_t{1037}}) {
    const size_t es = elem_size(t);
    std::vector<unsigned char> a(n * es), b(n * es), want(n * es);
    fill_random(t, op, a.data(), n, rng);
    fill_random(t, op, b.data(), n, rng);
    if (n >= 16) add_specials(t, a, b);
    for (size_t i = 0; i < n; ++i) expect_element(t, op, a.data(), b.data(), i, want.data());

    // reduce_local(in, inout): inout = op(inout, in).
    std::vector<unsigned char> inout = a;
    reduce_local(b.data(), inout.data(), n, t, op);
    // The three forms of combine.
    std::vector<unsigned char> three(n * es, 0xA5), left = a, right = b;
    combine(a.data(), b.data(), three.data(), n, t, op);
    combine(left.data(), b.data(), left.data(), n, t, op);
    combine(a.data(), right.data(), right.data(), n, t, op);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(same_element(t, inout.data(), want.data(), i))
          << name(t) << " " << name(op) << " n=" << n << " i=" << i << ": " << get(t, a.data(), i) << " op "
          << get(t, b.data(), i) << " = " << get(t, inout.data(), i) << ", want " << get(t, want.data(), i);
      ASSERT_TRUE(same_element(t, three.data(), want.data(), i)) << "combine, i=" << i;
      ASSERT_TRUE(same_element(t, left.data(), want.data(), i)) << "combine into a, i=" << i;
      ASSERT_TRUE(same_element(t, right.data(), want.data(), i)) << "combine into b, i=" << i;
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<DataType, ReduceOp>>& p) {
  return std::string(name(std::get<0>(p.param))) + "_" + name(std::get<1>(p.param));
}
INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, ReduceLocal,
                         ::testing::Combine(::testing::ValuesIn(kTypes), ::testing::ValuesIn(kOps)), case_name);

TEST(ReduceLocal, ZeroCountTouchesNothing) {
  std::vector<unsigned char> a(16, 0x11), b(16, 0x22);
  reduce_local(a.data(), b.data(), 0, DataType::float16, ReduceOp::sum);
  EXPECT_EQ(b, std::vector<unsigned char>(16, 0x22));
}

TEST(MpiMapping, TypesAndOps) {
  MPI_Datatype t;
  ASSERT_TRUE(strata::coll::host::mpi_type_of(DataType::int32, &t));
  EXPECT_EQ(t, MPI_INT32_T);
  ASSERT_TRUE(strata::coll::host::mpi_type_of(DataType::int64, &t));
  EXPECT_EQ(t, MPI_INT64_T);
  ASSERT_TRUE(strata::coll::host::mpi_type_of(DataType::float32, &t));
  EXPECT_EQ(t, MPI_FLOAT);
  ASSERT_TRUE(strata::coll::host::mpi_type_of(DataType::float64, &t));
  EXPECT_EQ(t, MPI_DOUBLE);
  EXPECT_FALSE(strata::coll::host::mpi_type_of(DataType::float16, &t));
  EXPECT_FALSE(strata::coll::host::mpi_type_of(DataType::bfloat16, &t));
  MPI_Op op;
  ASSERT_TRUE(strata::coll::host::mpi_op_of(ReduceOp::sum, &op));
  EXPECT_EQ(op, MPI_SUM);
  ASSERT_TRUE(strata::coll::host::mpi_op_of(ReduceOp::prod, &op));
  EXPECT_EQ(op, MPI_PROD);
  ASSERT_TRUE(strata::coll::host::mpi_op_of(ReduceOp::min, &op));
  EXPECT_EQ(op, MPI_MIN);
  ASSERT_TRUE(strata::coll::host::mpi_op_of(ReduceOp::max, &op));
  EXPECT_EQ(op, MPI_MAX);
}

}  // namespace
