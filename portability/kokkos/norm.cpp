// RMSNorm and the fused residual-add + RMSNorm as Kokkos kernels: one team
// per row; the team sums the squares (accumulator type, arith.hpp), then
// scales the row.
//   rms_norm:            y = x / sqrt(mean(x^2) + eps) * weight
//   fused_add_rms_norm:  residual = T(residual + x); y = rms_norm(residual)
// (the normalised value is the rounded, stored residual, so that the output
// is exactly rms_norm of what the residual stream now holds).
#include "portability/kokkos/arith.hpp"
#include "portability/kokkos/compat.hpp"
#include "portability/kokkos/spaces.hpp"

#include "base/log.hpp"

#include <cstdint>
#include <exception>

namespace strata::kokkos::detail {
namespace {

template <class ExecSpace, class T, bool Residual>
struct RmsNormRows {
  using Acc = acc_t<T>;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  Matrix<const T> x;
  Matrix<T> residual;
  Matrix<const T> weight;
  Matrix<T> y;
  Acc eps;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int64_t r = team.league_rank();
    const int64_t n = x.cols;
    Acc sum = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](const int64_t i, Acc& s) {
          Acc v = widen(at(x, r, i));
          if (Residual) {
            const T z = narrow<T>(v + widen(at(residual, r, i)));
            at(residual, r, i) = z;
            v = widen(z);
          }
          s += v * v;
        },
        sum);
    team.team_barrier();
    const Acc scale = Acc(1) / kokkos_sqrt(sum / static_cast<Acc>(n) + eps);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int64_t i) {
      const Acc v = Residual ? widen(at(residual, r, i)) : widen(at(x, r, i));
      at(y, r, i) = narrow<T>(v * scale * widen(at(weight, int64_t{0}, i)));
    });
  }
};

}  // namespace

template <class ExecSpace, class T>
Status rms_norm(const ExecSpace& space, Matrix<const T> x, Matrix<T> residual, Matrix<const T> weight, Matrix<T> y,
                double eps) noexcept {
  const bool fused = residual.data != nullptr;
  if (!valid(x) || !valid(y) || !valid(weight) || !same_shape(x, y) || weight.rows != 1 || weight.cols != x.cols ||
      (fused && !same_shape(x, residual)) || !(eps >= 0) || x.rows > INT32_MAX) {
    STRATA_LOG(error, kColl, "kokkos rms_norm: x %lldx%lld, y %lldx%lld, weight %lld, eps %g do not fit",
               static_cast<long long>(x.rows), static_cast<long long>(x.cols), static_cast<long long>(y.rows),
               static_cast<long long>(y.cols), static_cast<long long>(weight.cols), eps);
    return Status::invalid_argument;
  }
  if (x.rows == 0 || x.cols == 0) return Status::ok;
  try {
    Kokkos::TeamPolicy<ExecSpace> policy(space, static_cast<int>(x.rows), Kokkos::AUTO);
    const acc_t<T> e = static_cast<acc_t<T>>(eps);
    if (fused) {
      Kokkos::parallel_for("strata::kokkos::fused_add_rms_norm", policy,
                           RmsNormRows<ExecSpace, T, true>{x, residual, weight, y, e});
    } else {
      Kokkos::parallel_for("strata::kokkos::rms_norm", policy,
                           RmsNormRows<ExecSpace, T, false>{x, residual, weight, y, e});
    }
  } catch (const std::exception& e) {
    STRATA_LOG(error, kColl, "kokkos rms_norm on %s failed: %s", ExecSpace::name(), e.what());
    return runs_on_host<ExecSpace>() ? Status::internal : Status::device_error;
  }
  return Status::ok;
}

#define STRATA_KOKKOS_INSTANTIATE_NORM(Space, T)                                                                      \
  template STRATA_API Status rms_norm<Space, T>(const Space&, Matrix<const T>, Matrix<T>, Matrix<const T>, Matrix<T>, \
                                                double) noexcept;
STRATA_KOKKOS_FOR_EACH_SPACE_AND_REAL(STRATA_KOKKOS_INSTANTIATE_NORM)

}  // namespace strata::kokkos::detail
