#include "interposer/transfer/gpu_aware.hpp"

#include "mpi/gpu_awareness.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <cstring>

namespace strata::interposer {
namespace {

mpi::GpuRuntime this_runtime() {
  if (!gpu::available()) return mpi::GpuRuntime::none;
  return std::strcmp(gpu::backend_name(), "hip") == 0 ? mpi::GpuRuntime::hip : mpi::GpuRuntime::cuda;
}

}  // namespace

bool mpi_is_gpu_aware() {
  static const bool aware = mpi::library_is_gpu_aware(this_runtime());
  return aware;
}

}  // namespace strata::interposer
