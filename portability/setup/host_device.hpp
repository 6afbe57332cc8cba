// Host/device annotations: the one place that knows which compiler is
// building a kernel body. Kernel index math and pack bodies use these, so the
// same source compiles for the host, CUDA, HIP and Kokkos.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define STRATA_HOST_DEVICE __host__ __device__
#define STRATA_DEVICE __device__
#else
#define STRATA_HOST_DEVICE
#define STRATA_DEVICE
#endif

#define STRATA_INLINE inline __attribute__((always_inline))

// Before a host-device template whose instantiation for a device platform
// calls device-only functions (collectives/fused): nvcc would otherwise warn
// for the host instantiation it never emits. clang (hipcc) defers that check
// to code it emits, so it needs nothing.
#if defined(__CUDACC__) && !defined(__HIPCC__)
#define STRATA_HD_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define STRATA_HD_TEMPLATE
#endif
