// Can the MPI library take device pointers? Asked of the library at run time
// (MPIX_Query_cuda_support / MPIX_Query_rocm_support / MPIX_GPU_query_support,
// whichever it exports), overridable with STRATA_MPI_GPU_AWARE. The one
// detection: the interposer asks it for the runtime Strata was built with,
// the Kokkos layer for the memory space of a View.
#pragma once

#include <strata/export.h>

namespace strata::mpi {

// The device memory a buffer is in.
enum class GpuRuntime {
  none,  // no device runtime is visible: only STRATA_MPI_GPU_AWARE=yes says yes
  cuda,
  hip,
};

// True when buffers in `runtime`'s memory may be handed to the library:
// STRATA_MPI_GPU_AWARE=yes|no, else the library's answer for that runtime,
// asked once (after MPI_Init) and logged. Exported (STRATA_API) for
// Strata::kokkos, a static library over libstrata.so.
STRATA_API bool library_is_gpu_aware(GpuRuntime runtime) noexcept;

}  // namespace strata::mpi
