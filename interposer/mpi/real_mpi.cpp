#include "interposer/mpi/real_mpi.hpp"

#include "base/log.hpp"

#include <dlfcn.h>

namespace strata::mpi {
namespace {
RealMpi g_real;
}  // namespace

const RealMpi& real() { return g_real; }

void install_next_symbols() {
#define STRATA_CALL(fn, kind, lc, params, args, roles)                            \
  if (void* sym = dlsym(RTLD_NEXT, #fn)) {                                        \
    g_real.fn = reinterpret_cast<decltype(g_real.fn)>(sym);                       \
  } else {                                                                        \
    STRATA_LOG(debug, kShim, #fn " not found after the interposer; using P" #fn); \
  }
#include "interposer/calls/each_call.inc"
#undef STRATA_CALL
}

}  // namespace strata::mpi
