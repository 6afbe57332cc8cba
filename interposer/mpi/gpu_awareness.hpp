// Can the MPI library take device pointers? Asked of the library at run time
// (MPIX_Query_cuda_support / MPIX_Query_rocm_support / MPIX_GPU_query_support,
// whichever it exports), overridable with STRATA_MPI_GPU_AWARE.
#pragma once

namespace strata::mpi {

// True when buffers in GPU memory may be handed to the library. Decided once,
// after MPI_Init.
bool library_is_gpu_aware();

}  // namespace strata::mpi
