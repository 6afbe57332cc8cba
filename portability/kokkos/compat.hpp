// What differs between the Kokkos versions the layer supports (Debian's
// 3.4.01 in CI, 4.x and 5.x on the GPU machines), in one place.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace strata::kokkos::detail {

// Math functions moved from Kokkos::Experimental to Kokkos in 3.7.
KOKKOS_INLINE_FUNCTION float kokkos_sqrt(float v) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::sqrt(v);
#else
  return Kokkos::Experimental::sqrt(v);
#endif
}
KOKKOS_INLINE_FUNCTION double kokkos_sqrt(double v) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::sqrt(v);
#else
  return Kokkos::Experimental::sqrt(v);
#endif
}

// Does `ExecSpace` run its kernels on the host (so that host code, e.g. the
// host pack engine, may run inside them)?
template <class ExecSpace>
constexpr bool runs_on_host() {
  return Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
}

// Is memory of `MemSpace` readable by host code (and so by any MPI)?
template <class MemSpace>
constexpr bool host_readable() {
  return Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, MemSpace>::accessible;
}

// Which GPU runtime an execution space belongs to, for the MPI library's
// GPU-support query.
enum class Runtime { host, cuda, hip, other };

template <class ExecSpace>
constexpr Runtime runtime_of() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<ExecSpace, Kokkos::Cuda>::value) return Runtime::cuda;
#endif
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
  if (std::is_same<ExecSpace, Kokkos::HIP>::value) return Runtime::hip;
#else
  if (std::is_same<ExecSpace, Kokkos::Experimental::HIP>::value) return Runtime::hip;
#endif
#endif
  return runs_on_host<ExecSpace>() ? Runtime::host : Runtime::other;
}

}  // namespace strata::kokkos::detail
