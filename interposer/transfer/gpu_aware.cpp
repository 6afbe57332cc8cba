#include "interposer/transfer/gpu_aware.hpp"

#include "mpi/gpu_awareness.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <cstring>

namespace strata::interposer {
namespace {

// The runtime compiled in (the stand-in counts as CUDA), not whether a
// device is visible: asking that would start the driver of a host program
// at MPI_Init, and the answer is cached for the job, so a program that
// loads CUDA after MPI_Init would keep a GPU-aware library's device path
// turned off. Without a device no device buffer reaches the answer.
mpi::GpuRuntime this_runtime() {
  const char* backend = gpu::backend_name();
  if (std::strcmp(backend, "none") == 0) return mpi::GpuRuntime::none;
  return std::strcmp(backend, "hip") == 0 ? mpi::GpuRuntime::hip : mpi::GpuRuntime::cuda;
}

}  // namespace

bool mpi_is_gpu_aware() {
  static const bool aware = mpi::library_is_gpu_aware(this_runtime());
  return aware;
}

}  // namespace strata::interposer
