// One result type for every internal and public C++ call (no exceptions).
#pragma once

#include <strata/export.h>

#include <utility>

namespace strata {

enum class Status : int {
  ok = 0,
  invalid_argument,  // the caller passed something malformed
  not_supported,     // valid, but this build or this input is not handled here
  irreducible,       // a datatype with no canonical strided form
  out_of_memory,
  mpi_error,     // the underlying MPI returned an error code
  device_error,  // CUDA/HIP returned an error code
  timeout,
  internal,
};

STRATA_API const char* to_string(Status status) noexcept;

// A value or the status saying why there is none. Kept tiny on purpose:
// C++17 has no std::expected and we want no exceptions.
template <class T>
class Result {
 public:
  Result(T value) : status_(Status::ok), value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(status), value_() {}                // NOLINT: implicit by design

  bool ok() const noexcept { return status_ == Status::ok; }
  explicit operator bool() const noexcept { return ok(); }
  Status status() const noexcept { return status_; }
  const T& value() const& noexcept { return value_; }
  T& value() & noexcept { return value_; }
  T&& value() && noexcept { return std::move(value_); }
  const T& operator*() const& noexcept { return value_; }
  const T* operator->() const noexcept { return &value_; }

 private:
  Status status_;
  T value_;
};

}  // namespace strata

// Propagate a failing Status up the call chain (NCCL's CHECK, without the
// exceptions). The first detector logs; callers only propagate.
#define STRATA_TRY(expr)                              \
  do {                                                \
    ::strata::Status strata_try_status_ = (expr);     \
    if (strata_try_status_ != ::strata::Status::ok) { \
      return strata_try_status_;                      \
    }                                                 \
  } while (0)
