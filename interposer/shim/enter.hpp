// What every wrapper of libstrata_preload.so does around its handler: count
// the call, pass it through untouched under STRATA_DISABLE=1, post deferred
// sends where the call could wait for one of them, and never let an
// exception cross into the C caller.
#pragma once

#include "base/log.hpp"
#include "interposer/calls/call_ids.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/deferred_sends.hpp"
#include "interposer/transfer/plan.hpp"

#include <mpi.h>

namespace strata::interposer::shim {

template <calls::Kind K, class LibraryCall, class Handler>
int enter(calls::Id id, LibraryCall& library, Handler handler) noexcept {
  counters().calls_intercepted.fetch_add(1, std::memory_order_relaxed);
  if (disabled()) {
    counters().calls_passed_through.fetch_add(1, std::memory_order_relaxed);
    return library();
  }
  if constexpr (calls::flushes(K)) flush_deferred_sends();
  try {
    return handler();
  } catch (...) {
    STRATA_LOG(error, kShim, "%s: internal failure (out of memory?); returning MPI_ERR_INTERN", calls::name_of(id));
    return MPI_ERR_INTERN;
  }
}

}  // namespace strata::interposer::shim
