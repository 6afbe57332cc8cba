// Element-wise kernels of the collectives as Kokkos kernels, one work item
// per element of a rows x cols strided matrix (arith.hpp):
//   residual_add: residual = T(residual + x)
//   reduce:       inout = T(inout op in), op sum/prod/min/max
//   reduce_sum:   out = T(in_0 + ... + in_{n-1}), accumulated, rounded once
// min/max are `b < a ? b : a` / `a < b ? b : a` (the collectives' rule).
#include "portability/kokkos/arith.hpp"
#include "portability/kokkos/compat.hpp"
#include "portability/kokkos/spaces.hpp"

#include "base/log.hpp"

#include <exception>

namespace strata::kokkos::detail {
namespace {

template <class ExecSpace>
using Flat = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int64_t>>;

template <class T, ReduceOp Op>
struct Combine {
  Matrix<const T> in;
  Matrix<T> inout;

  KOKKOS_INLINE_FUNCTION void operator()(const int64_t k) const {
    const int64_t r = k / inout.cols;
    const int64_t c = k - r * inout.cols;
    const acc_t<T> a = widen(at(inout, r, c));
    const acc_t<T> b = widen(at(in, r, c));
    acc_t<T> v;
    if (Op == ReduceOp::sum) {
      v = a + b;
    } else if (Op == ReduceOp::prod) {
      v = a * b;
    } else if (Op == ReduceOp::min) {
      v = b < a ? b : a;
    } else {
      v = a < b ? b : a;
    }
    at(inout, r, c) = narrow<T>(v);
  }
};

template <class T>
struct SumOf {
  Matrix<const T> in[kMaxReduceInputs];
  int count = 0;
  Matrix<T> out;

  KOKKOS_INLINE_FUNCTION void operator()(const int64_t k) const {
    const int64_t r = k / out.cols;
    const int64_t c = k - r * out.cols;
    acc_t<T> s = 0;
    for (int i = 0; i < count; ++i) s += widen(at(in[i], r, c));
    at(out, r, c) = narrow<T>(s);
  }
};

template <class ExecSpace, class T, ReduceOp Op>
void launch_combine(const ExecSpace& space, const char* label, Matrix<const T> in, Matrix<T> inout) {
  Kokkos::parallel_for(label, Flat<ExecSpace>(space, 0, inout.rows * inout.cols), Combine<T, Op>{in, inout});
}

template <class ExecSpace>
Status failed(const char* what, const std::exception& e) {
  STRATA_LOG(error, kColl, "kokkos %s on %s failed: %s", what, ExecSpace::name(), e.what());
  return runs_on_host<ExecSpace>() ? Status::internal : Status::device_error;
}

Status misfit(const char* what) {
  STRATA_LOG(error, kColl, "kokkos %s: the Views' shapes do not fit", what);
  return Status::invalid_argument;
}

}  // namespace

template <class ExecSpace, class T>
Status residual_add(const ExecSpace& space, Matrix<const T> x, Matrix<T> residual) noexcept {
  if (!valid(x) || !valid(residual) || !same_shape(x, residual)) return misfit("residual_add");
  if (x.rows * x.cols == 0) return Status::ok;
  try {
    launch_combine<ExecSpace, T, ReduceOp::sum>(space, "strata::kokkos::residual_add", x, residual);
  } catch (const std::exception& e) {
    return failed<ExecSpace>("residual_add", e);
  }
  return Status::ok;
}

template <class ExecSpace, class T>
Status reduce(const ExecSpace& space, ReduceOp op, Matrix<const T> in, Matrix<T> inout) noexcept {
  if (!valid(in) || !valid(inout) || !same_shape(in, inout)) return misfit("reduce");
  if (in.rows * in.cols == 0) return Status::ok;
  try {
    switch (op) {
      case ReduceOp::sum:
        launch_combine<ExecSpace, T, ReduceOp::sum>(space, "strata::kokkos::reduce_sum", in, inout);
        break;
      case ReduceOp::prod:
        launch_combine<ExecSpace, T, ReduceOp::prod>(space, "strata::kokkos::reduce_prod", in, inout);
        break;
      case ReduceOp::min:
        launch_combine<ExecSpace, T, ReduceOp::min>(space, "strata::kokkos::reduce_min", in, inout);
        break;
      case ReduceOp::max:
        launch_combine<ExecSpace, T, ReduceOp::max>(space, "strata::kokkos::reduce_max", in, inout);
        break;
      default:
        STRATA_LOG(error, kColl, "kokkos reduce: unknown operation %d", static_cast<int>(op));
        return Status::invalid_argument;
    }
  } catch (const std::exception& e) {
    return failed<ExecSpace>("reduce", e);
  }
  return Status::ok;
}

template <class ExecSpace, class T>
Status reduce_sum(const ExecSpace& space, const Matrix<const T>* inputs, int count, Matrix<T> out) noexcept {
  if (count < 0 || count > kMaxReduceInputs || (count > 0 && inputs == nullptr) || !valid(out)) {
    return misfit("reduce_sum");
  }
  SumOf<T> f;
  for (int i = 0; i < count; ++i) {
    if (!valid(inputs[i]) || !same_shape(inputs[i], out)) return misfit("reduce_sum");
    f.in[i] = inputs[i];
  }
  f.count = count;
  f.out = out;
  if (out.rows * out.cols == 0) return Status::ok;
  try {
    Kokkos::parallel_for("strata::kokkos::reduce_sum_n", Flat<ExecSpace>(space, 0, out.rows * out.cols), f);
  } catch (const std::exception& e) {
    return failed<ExecSpace>("reduce_sum", e);
  }
  return Status::ok;
}

#define STRATA_KOKKOS_INSTANTIATE_REDUCE(Space, T)                                                          \
  template STRATA_API Status residual_add<Space, T>(const Space&, Matrix<const T>, Matrix<T>) noexcept;     \
  template STRATA_API Status reduce<Space, T>(const Space&, ReduceOp, Matrix<const T>, Matrix<T>) noexcept; \
  template STRATA_API Status reduce_sum<Space, T>(const Space&, const Matrix<const T>*, int, Matrix<T>) noexcept;
STRATA_KOKKOS_FOR_EACH_SPACE_AND_REAL(STRATA_KOKKOS_INSTANTIATE_REDUCE)

}  // namespace strata::kokkos::detail
