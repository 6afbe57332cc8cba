// What every wrapper of libstrata_preload.so does around its handler: count
// the call, pass it through untouched under STRATA_DISABLE=1, post deferred
// sends where the call could wait for one of them, and never let an
// exception cross into the C caller.
#pragma once

#include "base/log.hpp"
#include "interposer/calls/call_ids.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/transfer/deferred_sends.hpp"
#include "fault/hooks.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/plan.hpp"
#include "interposer/types/fast_types.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <mpi.h>

namespace strata::interposer::shim {

// The pass-through of a point-to-point call, in the wrapper before any
// role is built: host data of a datatype whose elements are single runs of
// bytes (types/fast_types.hpp) goes to the library at once. Plain loads and
// one plain store (the call count), no lock, no allocation; anything else
// (the recorder on, debug logging, deferred sends to post first, the
// interposer off) takes the general path.
template <bool Flushes>
inline bool pass_through(const void* buf, MPI_Datatype type) noexcept {
  if (disabled() || fault::hooks::on() || (Flushes && have_deferred_sends())) return false;
  if (log::enabled(log::Level::debug, log::kP2p)) return false;
  if (shape_of(type) != TypeShape::contiguous || gpu::maybe_device(buf)) return false;
  count_call(false);
  return true;
}

// A collective's pass-through, in the wrapper before any role is built:
// the interposer on, the recorder off, nothing deferred to post first
// (collectives flush), and then every buffer host memory of a datatype
// known to be one run of bytes per element (host_contiguous, below, once
// per buffer argument).
inline bool collective_may_pass() noexcept {
  return !disabled() && !fault::hooks::on() && !have_deferred_sends() && !log::enabled(log::Level::debug, log::kColl);
}
// Never asks the library about the handle: the argument may not matter on
// this rank (a non-root's receive type), so it may be anything.
inline bool host_contiguous(const void* buf, MPI_Datatype type) noexcept {
  return buf == nullptr || buf == MPI_IN_PLACE ||
         (buf != MPI_BOTTOM && fast_shape(type) == TypeShape::contiguous && !gpu::maybe_device(buf));
}
inline bool host_bytes(const void* buf) noexcept {
  return buf == nullptr || buf == MPI_IN_PLACE || (buf != MPI_BOTTOM && !gpu::maybe_device(buf));
}
inline bool passed() noexcept {
  count_call(false);
  return true;
}

// A completion call among whose requests none can be Strata's: no Strata
// request pending, no deferred send, no orphan to progress, the recorder
// off. The library's call at once.
inline bool nothing_to_complete() noexcept {
  if (disabled() || fault::hooks::on() || have_deferred_sends() || !pending_empty()) return false;
  count_call(false);
  return true;
}

template <calls::Kind K, class LibraryCall, class Handler>
int enter(calls::Id id, LibraryCall& library, Handler handler) noexcept {
  const bool off = disabled();
  count_call(off);
  if (off) return library();
  if constexpr (calls::flushes(K)) flush_deferred_sends();
  try {
    return handler();
  } catch (...) {
    STRATA_LOG(error, kShim, "%s: internal failure (out of memory?); returning MPI_ERR_INTERN", calls::name_of(id));
    return MPI_ERR_INTERN;
  }
}

}  // namespace strata::interposer::shim
