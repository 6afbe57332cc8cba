// The execution spaces and value types the Kokkos layer is compiled for: one
// explicit instantiation of every entry point per space the Kokkos build
// enables. A space not listed here (SYCL, OpenMPTarget, HPX) links to
// nothing: docs/kokkos.md says so.
#pragma once

#include <strata/kokkos.hpp>

#if defined(KOKKOS_ENABLE_SERIAL)
#define STRATA_KOKKOS_SERIAL(X, ...) X(Kokkos::Serial, ##__VA_ARGS__)
#else
#define STRATA_KOKKOS_SERIAL(X, ...)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
#define STRATA_KOKKOS_OPENMP(X, ...) X(Kokkos::OpenMP, ##__VA_ARGS__)
#else
#define STRATA_KOKKOS_OPENMP(X, ...)
#endif
#if defined(KOKKOS_ENABLE_THREADS)
#define STRATA_KOKKOS_THREADS(X, ...) X(Kokkos::Threads, ##__VA_ARGS__)
#else
#define STRATA_KOKKOS_THREADS(X, ...)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#define STRATA_KOKKOS_CUDA(X, ...) X(Kokkos::Cuda, ##__VA_ARGS__)
#else
#define STRATA_KOKKOS_CUDA(X, ...)
#endif
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
#define STRATA_KOKKOS_HIP(X, ...) X(Kokkos::HIP, ##__VA_ARGS__)
#else
#define STRATA_KOKKOS_HIP(X, ...) X(Kokkos::Experimental::HIP, ##__VA_ARGS__)
#endif
#else
#define STRATA_KOKKOS_HIP(X, ...)
#endif

// X(Space, extra...) for every enabled execution space.
#define STRATA_KOKKOS_FOR_EACH_SPACE(X, ...) \
  STRATA_KOKKOS_SERIAL(X, ##__VA_ARGS__)     \
  STRATA_KOKKOS_OPENMP(X, ##__VA_ARGS__)     \
  STRATA_KOKKOS_THREADS(X, ##__VA_ARGS__) STRATA_KOKKOS_CUDA(X, ##__VA_ARGS__) STRATA_KOKKOS_HIP(X, ##__VA_ARGS__)

// X(Space, T) for every enabled space and every value type of the kernels.
#if STRATA_KOKKOS_HAVE_HALF
#define STRATA_KOKKOS_HALF_TYPE(X, S) X(S, Kokkos::Experimental::half_t)
#else
#define STRATA_KOKKOS_HALF_TYPE(X, S)
#endif
#if STRATA_KOKKOS_HAVE_BFLOAT16
#define STRATA_KOKKOS_BHALF_TYPE(X, S) X(S, Kokkos::Experimental::bhalf_t)
#else
#define STRATA_KOKKOS_BHALF_TYPE(X, S)
#endif
#define STRATA_KOKKOS_EACH_REAL_OF(S, X) \
  X(S, float) X(S, double) STRATA_KOKKOS_HALF_TYPE(X, S) STRATA_KOKKOS_BHALF_TYPE(X, S)
#define STRATA_KOKKOS_FOR_EACH_SPACE_AND_REAL(X) STRATA_KOKKOS_FOR_EACH_SPACE(STRATA_KOKKOS_EACH_REAL_OF, X)
