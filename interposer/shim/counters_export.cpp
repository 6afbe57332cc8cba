// The one non-MPI entry point of libstrata_preload.so: what the interposer
// did so far (interposer/shim/strata_preload.h).
#include "interposer/shim/strata_preload.h"

#include <strata/export.h>

#include "interposer/transfer/counters.hpp"

using strata::interposer::counters;

extern "C" {

STRATA_API const strata_preload_counters_t* strata_preload_counters(void) {
  static thread_local strata_preload_counters_t snapshot;
  const auto& c = counters();
  snapshot.version = 5;
  snapshot.calls_intercepted = strata::interposer::calls_intercepted();
  snapshot.calls_passed_through = strata::interposer::calls_passed_through();
  snapshot.packs_by_strata = c.packs_by_strata.load();
  snapshot.sends_packed = c.sends_packed.load();
  snapshot.recvs_unpacked = c.recvs_unpacked.load();
  snapshot.requests_completed = c.requests_completed.load();
  snapshot.types_reducible = c.types_reducible.load();
  snapshot.types_irreducible = c.types_irreducible.load();
  snapshot.requests_started = c.requests_started.load();
  snapshot.spans_copied = c.spans_copied.load();
  snapshot.collectives_by_strata = c.collectives_by_strata.load();
  snapshot.collectives_staged = c.collectives_staged.load();
  snapshot.sends_deferred = c.sends_deferred.load();
  snapshot.deferred_flushes = c.deferred_flushes.load();
  snapshot.parts_by_copy_engine = c.parts_by_copy_engine.load();
  return &snapshot;
}

}  // extern "C"
