// The collectives' kernels as Kokkos kernels (strata::kokkos::rms_norm,
// fused_add_rms_norm, residual_add, reduce, reduce_sum) against naive
// float64 loops, float and double, on random shapes (1-48 rows, 1-1100
// columns) and layouts: LayoutRight, LayoutLeft and strided subviews of
// larger Views (LayoutStride), inputs and outputs laid out differently.
// Exact where the result is one rounding of an exact float64 value
// (residual add, pairwise sum/prod/min/max, the fused residual); within a
// few float ulps of the float64 result elsewhere. STRATA_TEST_SEED=<seed>
// replays a run.
#include "portability/kokkos/kokkos_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace strata_test;
namespace sk = strata::kokkos;

uint64_t master_seed() {
  static const uint64_t seed = [] {
    const uint64_t s = test_seed();
    std::printf("test_kokkos_kernels seed %llu (replay: STRATA_TEST_SEED=%llu)\n", static_cast<unsigned long long>(s),
                static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

// A rows x cols matrix on `Mem` with its host copy: a View of layout L, or
// (Sub) a strided window of a larger one. host() and dev() are the windows.
template <class T, class L, bool Sub, class Mem>
struct Matrix {
  Kokkos::View<T**, L, Mem> parent;
  typename Kokkos::View<T**, L, Mem>::HostMirror mirror;
  std::pair<size_t, size_t> r, c;

  Matrix(Rng& rng, size_t rows, size_t cols) {
    const size_t pr = Sub ? static_cast<size_t>(uniform(rng, 0, 3)) : 0;
    const size_t pc = Sub ? static_cast<size_t>(uniform(rng, 0, 3)) : 0;
    parent = Kokkos::View<T**, L, Mem>("m", rows + pr + (Sub ? 2 : 0), cols + pc + (Sub ? 1 : 0));
    mirror = Kokkos::create_mirror(parent);
    r = {pr, pr + rows};
    c = {pc, pc + cols};
  }
  auto dev() const { return Kokkos::subview(parent, r, c); }
  auto host() const { return Kokkos::subview(mirror, r, c); }
  void fill(Rng& rng, double lo, double hi) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (size_t i = 0; i < mirror.extent(0); ++i)
      for (size_t j = 0; j < mirror.extent(1); ++j) mirror(i, j) = static_cast<T>(u(rng));
    Kokkos::deep_copy(parent, mirror);
  }
  void fetch() { Kokkos::deep_copy(mirror, parent); }
};

template <class T>
double tolerance() {
  return std::is_same<T, float>::value ? 4e-6 : 1e-13;
}

// |got - want| within a relative tolerance of the float64 value (plus a
// small absolute one for values near zero).
template <class T>
::testing::AssertionResult close(T got, double want, double scale) {
  const double err = std::fabs(static_cast<double>(got) - want);
  if (err <= tolerance<T>() * (std::fabs(want) + scale)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << static_cast<double>(got) << ", want " << want << " (error " << err
                                       << ")";
}

template <class Where, class T, class LX, bool SX, class LY, bool SY>
void check_norm(Rng& rng, bool fused) {
  using Space = typename Where::space;
  using Mem = typename Space::memory_space;
  Space space;
  const size_t rows = static_cast<size_t>(uniform(rng, 1, 48));
  const size_t cols = static_cast<size_t>(uniform(rng, 1, 1100));
  const double eps = std::vector<double>{1e-6, 1e-5, 0.25}[static_cast<size_t>(uniform(rng, 0, 2))];
  SCOPED_TRACE(std::string(fused ? "fused_add_rms_norm " : "rms_norm ") + std::to_string(rows) + "x" +
               std::to_string(cols) + " eps " + std::to_string(eps) +
               "; replay: STRATA_TEST_SEED=" + std::to_string(master_seed()));
  Matrix<T, LX, SX, Mem> x(rng, rows, cols);
  Matrix<T, LY, SY, Mem> y(rng, rows, cols);
  Matrix<T, LY, !SY, Mem> res(rng, rows, cols);
  Kokkos::View<T*, Mem> w("w", cols);
  auto hw = Kokkos::create_mirror(w);
  x.fill(rng, -2, 2);
  y.fill(rng, -9, 9);  // poison
  res.fill(rng, -2, 2);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (size_t i = 0; i < cols; ++i) hw(i) = static_cast<T>(u(rng));
  Kokkos::deep_copy(w, hw);
  std::vector<T> y_before;
  for (size_t i = 0; i < y.mirror.extent(0); ++i)
    for (size_t j = 0; j < y.mirror.extent(1); ++j) y_before.push_back(y.mirror(i, j));
  // The oracle, from the host copies before the kernel runs.
  std::vector<double> want(rows * cols), want_res(rows * cols);
  for (size_t i = 0; i < rows; ++i) {
    double ss = 0;
    for (size_t j = 0; j < cols; ++j) {
      double v = static_cast<double>(x.host()(i, j));
      if (fused) {
        const T z = static_cast<T>(v + static_cast<double>(res.host()(i, j)));  // one rounding
        want_res[i * cols + j] = static_cast<double>(z);
        v = static_cast<double>(z);
      }
      ss += v * v;
    }
    const double scale = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
    for (size_t j = 0; j < cols; ++j) {
      const double v = fused ? want_res[i * cols + j] : static_cast<double>(x.host()(i, j));
      want[i * cols + j] = v * scale * static_cast<double>(hw(j));
    }
  }
  if (fused) {
    ASSERT_EQ(sk::fused_add_rms_norm(space, x.dev(), res.dev(), w, y.dev(), eps), strata::Status::ok);
  } else {
    ASSERT_EQ(sk::rms_norm(space, x.dev(), w, y.dev(), eps), strata::Status::ok);
  }
  space.fence();
  y.fetch();
  res.fetch();
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      ASSERT_TRUE(close<T>(y.host()(i, j), want[i * cols + j], 1e-3)) << "y(" << i << "," << j << ")";
      if (fused) {
        ASSERT_EQ(static_cast<double>(res.host()(i, j)), want_res[i * cols + j]) << i << "," << j;
      }
    }
  // Nothing outside the output window was written.
  size_t k = 0;
  for (size_t i = 0; i < y.mirror.extent(0); ++i)
    for (size_t j = 0; j < y.mirror.extent(1); ++j, ++k) {
      const bool inside = i >= y.r.first && i < y.r.second && j >= y.c.first && j < y.c.second;
      if (!inside) {
        ASSERT_EQ(y.mirror(i, j), y_before[k]) << "outside the window at " << i << "," << j;
      }
    }
}

template <class Where, class T, class LA, bool SA, class LB, bool SB>
void check_elementwise(Rng& rng) {
  using Space = typename Where::space;
  using Mem = typename Space::memory_space;
  Space space;
  const size_t rows = static_cast<size_t>(uniform(rng, 1, 30));
  const size_t cols = static_cast<size_t>(uniform(rng, 1, 700));
  SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) +
               "; replay: STRATA_TEST_SEED=" + std::to_string(master_seed()));
  Matrix<T, LA, SA, Mem> a(rng, rows, cols);
  // residual_add and the pairwise reductions: exact.
  for (int op = -1; op < 4; ++op) {
    Matrix<T, LB, SB, Mem> b(rng, rows, cols);
    a.fill(rng, -3, 3);
    b.fill(rng, -3, 3);
    std::vector<T> want(rows * cols);
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) {
        const double va = static_cast<double>(a.host()(i, j));  // in
        const double vb = static_cast<double>(b.host()(i, j));  // inout
        double v = 0;
        switch (op) {
          case -1:
          case 0: v = vb + va; break;
          case 1: v = vb * va; break;
          case 2: v = va < vb ? va : vb; break;
          default: v = vb < va ? va : vb; break;
        }
        want[i * cols + j] = static_cast<T>(v);
      }
    if (op < 0) {
      ASSERT_EQ(sk::residual_add(space, a.dev(), b.dev()), strata::Status::ok);
    } else {
      ASSERT_EQ(sk::reduce(space, static_cast<sk::ReduceOp>(op), a.dev(), b.dev()), strata::Status::ok);
    }
    space.fence();
    b.fetch();
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j)
        ASSERT_EQ(b.host()(i, j), want[i * cols + j]) << "op " << op << " " << i << "," << j;
  }
  // reduce_sum of n inputs: accumulated, rounded once.
  const int n = static_cast<int>(uniform(rng, 1, sk::kMaxReduceInputs));
  std::vector<Matrix<T, LA, SA, Mem>> ins;
  for (int k = 0; k < n; ++k) {
    ins.emplace_back(rng, rows, cols);
    ins.back().fill(rng, -1, 1);
  }
  Matrix<T, LB, SB, Mem> out(rng, rows, cols);
  out.fill(rng, 5, 6);
  std::vector<decltype(ins[0].dev())> views;
  for (auto& m : ins) views.push_back(m.dev());
  ASSERT_EQ(sk::reduce_sum(space, views.data(), n, out.dev()), strata::Status::ok);
  space.fence();
  out.fetch();
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      double s = 0, mag = 0;
      for (auto& m : ins) {
        s += static_cast<double>(m.host()(i, j));
        mag += std::fabs(static_cast<double>(m.host()(i, j)));
      }
      ASSERT_TRUE(close<T>(out.host()(i, j), s, mag * n)) << "reduce_sum of " << n << " at " << i << "," << j;
    }
}

template <class Where, class T>
void check_kernels(int rounds) {
  Rng rng(master_seed() + sizeof(T));
  using L = Kokkos::LayoutLeft;
  using R = Kokkos::LayoutRight;
  for (int k = 0; k < rounds; ++k) {
    check_norm<Where, T, R, false, R, false>(rng, k % 2 == 1);
    check_norm<Where, T, L, false, R, true>(rng, k % 2 == 0);
    check_norm<Where, T, R, true, L, false>(rng, k % 2 == 1);
    check_norm<Where, T, L, true, L, true>(rng, k % 2 == 0);
    check_elementwise<Where, T, R, false, L, true>(rng);
    check_elementwise<Where, T, L, true, R, false>(rng);
  }
}

template <class Where>
class KokkosKernels : public testing::Test {};
using Spaces = testing::Types<Host, Device>;
TYPED_TEST_SUITE(KokkosKernels, Spaces, SpaceNames);

TYPED_TEST(KokkosKernels, Float) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  check_kernels<TypeParam, float>(20);
}

TYPED_TEST(KokkosKernels, Double) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  check_kernels<TypeParam, double>(20);
}

// One-row Views, empty shapes, and shapes that do not fit.
TYPED_TEST(KokkosKernels, RankOneEmptyAndMisfits) {
  STRATA_SKIP_WITHOUT_DEVICE(TypeParam);
  using Space = typename TypeParam::space;
  using Mem = typename Space::memory_space;
  Space space;
  Kokkos::View<double*, Mem> x("x", 5), w("w", 5), y("y", 5), r("r", 4);
  Kokkos::deep_copy(x, 2.0);
  Kokkos::deep_copy(w, 3.0);
  ASSERT_EQ(sk::rms_norm(space, x, w, y, 0.0), strata::Status::ok);  // 2 / sqrt(4) * 3 = 3
  space.fence();
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  for (int i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(hy(i), 3.0);
  EXPECT_EQ(sk::residual_add(space, x, r), strata::Status::invalid_argument);
  EXPECT_EQ(sk::reduce(space, sk::ReduceOp::max, r, x), strata::Status::invalid_argument);
  EXPECT_EQ(sk::rms_norm(space, x, r, y), strata::Status::invalid_argument);  // weight of 4 for rows of 5
  EXPECT_EQ(sk::rms_norm(space, x, w, y, -1.0), strata::Status::invalid_argument);
  Kokkos::View<double**, Mem> e("e", 0, 5), f("f", 0, 5);
  EXPECT_EQ(sk::rms_norm(space, e, w, f), strata::Status::ok);
  EXPECT_EQ(sk::reduce_sum(space, &e, 1, f), strata::Status::ok);
  EXPECT_EQ(sk::reduce_sum(space, &e, sk::kMaxReduceInputs + 1, f), strata::Status::invalid_argument);
}

TEST(KokkosKernelsBuild, HalfPrecisionAvailability) {
  // Kokkos 3.x and host-only builds map half_t to float: only float and
  // double are compiled then (docs/kokkos.md).
  std::printf("half_t: %s, bhalf_t: %s (Kokkos %d)\n", STRATA_KOKKOS_HAVE_HALF ? "yes" : "no",
              STRATA_KOKKOS_HAVE_BFLOAT16 ? "yes" : "no", KOKKOS_VERSION);
#if KOKKOS_VERSION < 40000
  EXPECT_EQ(STRATA_KOKKOS_HAVE_BFLOAT16, 0);
#endif
}

}  // namespace
