#include "mpi/gpu_awareness.hpp"

#include "base/config.hpp"
#include "base/log.hpp"

#include <dlfcn.h>
#include <mpi.h>

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
// an MPI may or may not export, and a link dependency would tie Strata to
// one MPI's build.
bool ask_library(GpuRuntime runtime) {
  const bool hip = runtime == GpuRuntime::hip;
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

bool answer_for(GpuRuntime runtime) {
  const bool answer = ask_library(runtime);
  STRATA_LOG(debug, kDevice, "the MPI library %s %s buffers", answer ? "accepts" : "does not accept",
             runtime == GpuRuntime::hip ? "HIP" : "CUDA");
  return answer;
}

Aware read_override() noexcept {
  try {
    return g_aware.get();
  } catch (...) {  // the registry could not be loaded (out of memory): ask the library
    return Aware::automatic;
  }
}

}  // namespace

bool library_is_gpu_aware(GpuRuntime runtime) noexcept {
  static const Aware forced = read_override();
  switch (forced) {
    case Aware::yes: return true;
    case Aware::no: return false;
    case Aware::automatic: break;
  }
  switch (runtime) {
    case GpuRuntime::none: return false;
    case GpuRuntime::cuda: {
      static const bool cuda = answer_for(GpuRuntime::cuda);
      return cuda;
    }
    case GpuRuntime::hip: {
      static const bool hip = answer_for(GpuRuntime::hip);
      return hip;
    }
  }
  return false;
}

}  // namespace strata::mpi
