// The one non-MPI entry point of libstrata_preload.so: what the interposer
// did so far (interposer/shim/strata_preload.h).
#include "interposer/shim/strata_preload.h"

#include <strata/export.h>

#include "collectives/routing.hpp"
#include "interposer/transfer/counters.hpp"

using strata::interposer::counters;

extern "C" {

STRATA_API const strata_preload_counters_t* strata_preload_counters(void) {
  static thread_local strata_preload_counters_t snapshot;
  const auto& c = counters();
  snapshot.version = 14;
  snapshot.calls_intercepted = strata::interposer::calls_intercepted();
  snapshot.calls_passed_through = strata::interposer::calls_passed_through();
#define STRATA_COUNTER_COPY(name, what) snapshot.name = c.name.load();
  STRATA_INTERPOSER_COUNTERS(STRATA_COUNTER_COPY, STRATA_COUNTER_COPY)
#undef STRATA_COUNTER_COPY
  snapshot.collective_decisions = strata::coll::decisions_taken();
  return &snapshot;
}

}  // extern "C"
