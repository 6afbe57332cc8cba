#include "interposer/mpi/real_mpi.hpp"

#include "base/log.hpp"

#include <dlfcn.h>

namespace strata::mpi {
namespace {
RealMpi g_real;
}  // namespace

const RealMpi& real() { return g_real; }

void install_next_symbols() {
#define STRATA_RESOLVE(name)                                                                     \
  if (void* sym = dlsym(RTLD_NEXT, "MPI_" #name)) {                                              \
    g_real.name = reinterpret_cast<decltype(g_real.name)>(sym);                                  \
  } else {                                                                                       \
    STRATA_LOG(debug, kShim, "MPI_" #name " not found after the interposer; using PMPI_" #name); \
  }
  STRATA_INTERCEPTED_MPI(STRATA_RESOLVE)
#undef STRATA_RESOLVE
}

}  // namespace strata::mpi
