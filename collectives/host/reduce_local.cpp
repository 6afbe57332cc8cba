// Local reductions: one template per (type, op), chosen once per call from a
// table, so the loops carry no per-element switch and vectorise.
//
// float16 and bfloat16 are widened to float32, combined, and rounded back to
// nearest even (float16.hpp). Integer sums and products wrap (two's
// complement) like the MPI libraries do, without signed-overflow UB.
// min/max are `b < a ? b : a` / `a < b ? b : a`: with NaN or signed zeros
// the result depends on the operand order, which the algorithms fix
// (combine(lower, higher)).
#include "collectives/host/float16.hpp"
#include "collectives/host/internal.hpp"

#include <array>
#include <type_traits>

namespace strata::coll::host {
namespace {

struct Sum {
  template <class T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};
struct Prod {
  template <class T>
  static T apply(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};
struct Min {
  template <class T>
  static T apply(T a, T b) noexcept {
    return b < a ? b : a;
  }
};
struct Max {
  template <class T>
  static T apply(T a, T b) noexcept {
    return a < b ? b : a;
  }
};

// How a type is stored and in which type it is combined.
template <class T>
struct Native {
  using Storage = T;
  using Compute = T;
  static Compute load(Storage v) noexcept { return v; }
  static Storage store(Compute v) noexcept { return v; }
};
struct Half {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t v) noexcept { return half_to_float(v); }
  static uint16_t store(float v) noexcept { return float_to_half(v); }
};
struct BFloat {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t v) noexcept { return bfloat16_to_float(v); }
  static uint16_t store(float v) noexcept { return float_to_bfloat16(v); }
};

// The three aliasing forms get their own loops: with `__restrict` on
// distinct arrays the compiler vectorises without run-time overlap checks
// (which would send out == a to the scalar fallback).
template <class F, class Op>
void combine3(const void* a, const void* b, void* out, size_t n) noexcept {
  using S = typename F::Storage;
  const S* __restrict x = static_cast<const S*>(a);
  const S* __restrict y = static_cast<const S*>(b);
  S* __restrict o = static_cast<S*>(out);
  for (size_t i = 0; i < n; ++i) o[i] = F::store(Op::apply(F::load(x[i]), F::load(y[i])));
}
template <class F, class Op>
void combine_into_left(void* a, const void* b, size_t n) noexcept {  // a = op(a, b)
  using S = typename F::Storage;
  S* __restrict x = static_cast<S*>(a);
  const S* __restrict y = static_cast<const S*>(b);
  for (size_t i = 0; i < n; ++i) x[i] = F::store(Op::apply(F::load(x[i]), F::load(y[i])));
}
template <class F, class Op>
void combine_into_right(const void* a, void* b, size_t n) noexcept {  // b = op(a, b)
  using S = typename F::Storage;
  const S* __restrict x = static_cast<const S*>(a);
  S* __restrict y = static_cast<S*>(b);
  for (size_t i = 0; i < n; ++i) y[i] = F::store(Op::apply(F::load(x[i]), F::load(y[i])));
}

struct Kernels {
  void (*three)(const void*, const void*, void*, size_t) noexcept;
  void (*left)(void*, const void*, size_t) noexcept;
  void (*right)(const void*, void*, size_t) noexcept;
};

template <class F, class Op>
constexpr Kernels kernels() {
  return {&combine3<F, Op>, &combine_into_left<F, Op>, &combine_into_right<F, Op>};
}
template <class F>
constexpr std::array<Kernels, 4> row() {  // in ReduceOp order
  return {kernels<F, Sum>(), kernels<F, Prod>(), kernels<F, Min>(), kernels<F, Max>()};
}

// In DataType order: int32, int64, float32, float64, float16, bfloat16.
constexpr std::array<std::array<Kernels, 4>, 6> kTable = {
    row<Native<int32_t>>(), row<Native<int64_t>>(), row<Native<float>>(), row<Native<double>>(), row<Half>(),
    row<BFloat>()};

}  // namespace

namespace detail {

bool valid_type(DataType type) noexcept {
  const int t = static_cast<int>(type);
  return t >= 0 && t < static_cast<int>(kTable.size());
}

bool valid_op(ReduceOp op) noexcept {
  const int o = static_cast<int>(op);
  return o >= 0 && o < 4;
}

size_t element_size(DataType type) noexcept {
  switch (type) {
    case DataType::int32: return 4;
    case DataType::int64: return 8;
    case DataType::float32: return 4;
    case DataType::float64: return 8;
    case DataType::float16: return 2;
    case DataType::bfloat16: return 2;
  }
  return 0;
}

void combine(const void* a, const void* b, void* out, size_t count, DataType type, ReduceOp op) noexcept {
  if (count == 0 || !valid_type(type) || !valid_op(op)) return;
  const Kernels& k = kTable[static_cast<size_t>(type)][static_cast<size_t>(op)];
  if (out == a) {
    k.left(out, b, count);
  } else if (out == b) {
    k.right(a, out, count);
  } else {
    k.three(a, b, out, count);
  }
}

bool mpi_move_type_of(DataType type, MPI_Datatype* out) noexcept {
  if (type == DataType::float16 || type == DataType::bfloat16) {
    *out = MPI_UINT16_T;
    return true;
  }
  return mpi_type_of(type, out);
}

}  // namespace detail

void reduce_local(const void* in, void* inout, size_t count, DataType type, ReduceOp op) noexcept {
  detail::combine(inout, in, inout, count, type, op);
}

bool mpi_type_of(DataType type, MPI_Datatype* out) noexcept {
  switch (type) {
    case DataType::int32: *out = MPI_INT32_T; return true;
    case DataType::int64: *out = MPI_INT64_T; return true;
    case DataType::float32: *out = MPI_FLOAT; return true;
    case DataType::float64: *out = MPI_DOUBLE; return true;
    case DataType::float16:
    case DataType::bfloat16: return false;
  }
  return false;
}

bool mpi_op_of(ReduceOp op, MPI_Op* out) noexcept {
  switch (op) {
    case ReduceOp::sum: *out = MPI_SUM; return true;
    case ReduceOp::prod: *out = MPI_PROD; return true;
    case ReduceOp::min: *out = MPI_MIN; return true;
    case ReduceOp::max: *out = MPI_MAX; return true;
  }
  return false;
}

}  // namespace strata::coll::host
