#include "interposer/mpi/gpu_awareness.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <cstring>

namespace strata::mpi {
namespace {

enum class Aware { automatic, yes, no };
config::ChoiceParam<Aware> g_aware{
    "STRATA_MPI_GPU_AWARE",
    Aware::automatic,
    {{"auto", Aware::automatic}, {"yes", Aware::yes}, {"no", Aware::no}},
    "Whether the MPI library accepts GPU buffers: auto asks it (MPIX_Query_cuda_support, MPIX_Query_rocm_support, "
    "MPIX_GPU_query_support); yes/no override"};

// The query functions are looked up at run time: they are extensions that
// an MPI may or may not export, and a link dependency would tie the
// interposer to one MPI's build.
bool ask_library() {
  const bool hip = std::strcmp(gpu::backend_name(), "hip") == 0;
  using Query = int (*)();
  if (auto q =
          reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, hip ? "MPIX_Query_rocm_support" : "MPIX_Query_cuda_support"))) {
    return q() != 0;
  }
  using GpuQuery = int (*)(int, int*);
  if (auto q = reinterpret_cast<GpuQuery>(dlsym(RTLD_DEFAULT, "MPIX_GPU_query_support"))) {
    // MPICH: MPIX_GPU_SUPPORT_CUDA = 0, MPIX_GPU_SUPPORT_ZE = 1, MPIX_GPU_SUPPORT_HIP = 2.
    int supported = 0;
    return q(hip ? 2 : 0, &supported) == MPI_SUCCESS && supported != 0;
  }
  return false;
}

}  // namespace

bool library_is_gpu_aware() {
  static const bool aware = [] {
    switch (g_aware.get()) {
      case Aware::yes: return true;
      case Aware::no: return false;
      case Aware::automatic: break;
    }
    const bool answer = gpu::available() && ask_library();
    STRATA_LOG(info, kDevice, "the MPI library %s GPU buffers", answer ? "accepts" : "does not accept");
    return answer;
  }();
  return aware;
}

}  // namespace strata::mpi
