// Element arithmetic of the kernels: values are widened to an accumulator
// type (double for double, float for float and the 16-bit types), combined,
// and rounded back once.
#pragma once

#include <strata/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace strata::kokkos::detail {

template <class T>
using acc_t = typename std::conditional<std::is_same<T, double>::value, double, float>::type;

template <class T>
KOKKOS_INLINE_FUNCTION acc_t<T> widen(const T& v) {
  if constexpr (std::is_same<T, double>::value || std::is_same<T, float>::value) {
    return v;
  } else {
    return static_cast<float>(v);  // half_t / bhalf_t
  }
}

template <class T>
KOKKOS_INLINE_FUNCTION T narrow(acc_t<T> v) {
  return static_cast<T>(v);
}

// Element (r, c) of a strided matrix.
template <class T>
KOKKOS_INLINE_FUNCTION T& at(const Matrix<T>& m, int64_t r, int64_t c) {
  return m.data[r * m.row_stride + c * m.col_stride];
}

template <class A, class B>
bool same_shape(const Matrix<A>& a, const Matrix<B>& b) {
  return a.rows == b.rows && a.cols == b.cols;
}

// A non-empty matrix needs its data.
template <class T>
bool valid(const Matrix<T>& m) {
  return m.rows >= 0 && m.cols >= 0 && (m.rows * m.cols == 0 || m.data != nullptr);
}

}  // namespace strata::kokkos::detail
