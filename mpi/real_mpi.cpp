#include "mpi/real_mpi.hpp"

#include "base/log.hpp"

#include <dlfcn.h>

namespace strata::mpi {
RealMpi g_real_mpi;

void install_next_symbols() {
#define STRATA_CALL(fn, kind, lc, params, args, roles)                            \
  if (void* sym = dlsym(RTLD_NEXT, #fn)) {                                        \
    g_real_mpi.fn = reinterpret_cast<decltype(g_real_mpi.fn)>(sym);               \
  } else {                                                                        \
    STRATA_LOG(debug, kShim, #fn " not found after the interposer; using P" #fn); \
  }
#include "mpi/calls/each_call.inc"
#undef STRATA_CALL
}

}  // namespace strata::mpi
