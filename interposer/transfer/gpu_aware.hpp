// Whether the MPI library takes device pointers of this build's runtime: the
// one detection (mpi/gpu_awareness.hpp) asked for CUDA or HIP, whichever
// Strata was built with, or for no runtime when no device is visible.
// Decided once, after MPI_Init.
#pragma once

namespace strata::interposer {

bool mpi_is_gpu_aware();

}  // namespace strata::interposer
