// What every wrapper of libstrata_preload.so does around its handler: count
// the call, pass it through untouched under STRATA_DISABLE=1, post deferred
// sends where the call could wait for one of them, and never let an
// exception cross into the C caller.
#pragma once

#include "base/log.hpp"
#include "interposer/calls/call_ids.hpp"
#include "interposer/transfer/counters.hpp"
#include "interposer/handlers/watched_recv.hpp"
#include "interposer/model/host_model.hpp"
#include "interposer/transfer/deferred_sends.hpp"
#include "interposer/transfer/direct_active.hpp"
#include "fault/hooks.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/plan.hpp"
#include "interposer/transfer/probed.hpp"
#include "interposer/transfer/summary_time.hpp"
#include "interposer/transfer/watched_recvs.hpp"
#include "interposer/types/fast_types.hpp"
#include "mpi/real_mpi.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <mpi.h>

namespace strata::interposer::shim {

// The pass-throughs below decide in the exported function, before any role
// is built, with plain loads and stores only: no call, no lock, no
// allocation, no locked instruction (so that the compiler saves no
// registers on that path). Whatever they cannot answer that way (the
// switch or the backend not read yet, a datatype not seen yet, a thread's
// first call) they leave to the general path, which answers and remembers.

// STRATA_DISABLE=1, known and counted: the library at once.
__attribute__((always_inline)) inline bool switched_off() noexcept {
  return __atomic_load_n(&g_disabled, __ATOMIC_RELAXED) > 0 && count_own_call(true);
}
// The interposer on and nothing to do first: the recorder off, no debug
// logging of `subsys`, no deferred send to post where the call flushes.
template <bool Flushes>
__attribute__((always_inline)) inline bool quiet(uint32_t subsys) noexcept {
  return __atomic_load_n(&g_disabled, __ATOMIC_RELAXED) == 0 && !fault::hooks::on() &&
         !(Flushes && have_deferred_sends()) && !log::enabled(log::Level::debug, subsys);
}

// A point-to-point call's datatype that leaves host data to the library:
// one whose elements are single runs of bytes (types/fast_types.hpp), or
// any known one where the host model gives every transfer to the library
// (model/host_model.hpp: the general path would ask the model and pass).
__attribute__((always_inline)) inline bool library_host_type(MPI_Datatype type) noexcept {
  const TypeShape shape = fast_shape(type);
  return shape == TypeShape::contiguous ||
         (shape == TypeShape::other && __atomic_load_n(&g_host_transfers_to_library, __ATOMIC_RELAXED) > 0);
}

// The pass-through of a point-to-point call: host data of such a datatype
// goes to the library at once.
template <bool Flushes>
__attribute__((always_inline)) inline bool pass_through(const void* buf, MPI_Datatype type) noexcept {
  return quiet<Flushes>(log::kP2p) && library_host_type(type) && gpu::surely_host(buf) && count_own_call(false);
}

// A receive while the device-direct transport is on (device_direct::
// active()): any receive that can hold a descriptor may get one. Contiguous
// host data still goes to the library as asked, from the exported function:
// a receive too small for a descriptor (or from MPI_PROC_NULL) untouched,
// any other watched (transfer/watched_recvs.hpp: a blocking one by its
// status, a non-blocking one by its request). No message kept by a probe
// may be waiting (probed.hpp): those are matched first, on the general path.
enum class HostRecv : uint8_t { general, library, watched };
template <bool Flushes, class Count>
__attribute__((always_inline)) inline HostRecv host_recv_route(const void* buf, Count count, MPI_Datatype type,
                                                               int source) noexcept {
  if (!quiet<Flushes>(log::kP2p) || probed::any_kept() || !gpu::surely_host(buf)) return HostRecv::general;
  const ShapeAndSize t = fast_shape_and_size(type);
  if (t.shape != TypeShape::contiguous || !count_own_call(false)) return HostRecv::general;
  const bool small = t.size != 0 && count >= 0 && static_cast<uint64_t>(count) * t.size < kDirectDescriptorBytes;
  return source == MPI_PROC_NULL || small ? HostRecv::library : HostRecv::watched;
}
// A watched blocking receive, returned by the library with `rc`: only
// exactly a descriptor's size is looked at.
template <class Count>
__attribute__((always_inline)) inline int host_recv_done(int rc, void* buf, Count count, MPI_Datatype type,
                                                         MPI_Comm comm, MPI_Status* status) noexcept {
  int received = 0;
  if (rc != MPI_SUCCESS || mpi::real().MPI_Get_count(status, MPI_BYTE, &received) != MPI_SUCCESS ||
      received != static_cast<int>(kDirectDescriptorBytes)) {
    return rc;
  }
  return handlers::host_recv_arrived(buf, static_cast<int64_t>(count), type, comm, *status);
}
// A watched non-blocking receive, posted.
template <class Count>
__attribute__((always_inline)) inline void watch_host_recv(MPI_Request request, void* buf, Count count,
                                                           MPI_Datatype type, MPI_Comm comm) noexcept {
  if (!watched_recvs().add(request, WatchedRecv{buf, static_cast<int64_t>(count), type, comm})) {
    handlers::watch_refused(request, buf, static_cast<int64_t>(count), type, comm);
  }
}

// A collective's pass-through: quiet (collectives flush), and then every
// buffer host memory of a datatype known to be one run of bytes per
// element (host_contiguous, below, once per buffer argument).
__attribute__((always_inline)) inline bool collective_may_pass() noexcept { return quiet<true>(log::kColl); }
// Never asks the library about the handle: the argument may not matter on
// this rank (a non-root's receive type), so it may be anything.
__attribute__((always_inline)) inline bool host_contiguous(const void* buf, MPI_Datatype type) noexcept {
  return buf == nullptr || buf == MPI_IN_PLACE ||
         (buf != MPI_BOTTOM && fast_shape(type) == TypeShape::contiguous && gpu::surely_host(buf));
}
__attribute__((always_inline)) inline bool host_bytes(const void* buf) noexcept {
  return buf == nullptr || buf == MPI_IN_PLACE || (buf != MPI_BOTTOM && gpu::surely_host(buf));
}
__attribute__((always_inline)) inline bool passed() noexcept { return count_own_call(false); }

// A completion call among whose requests none can be Strata's: no Strata
// request pending, no host receive watched for descriptors, no deferred send, no orphan to progress, the recorder
// off. The library's call at once.
__attribute__((always_inline)) inline bool nothing_to_complete() noexcept {
  return quiet<true>(0) && pending_empty() && watched_empty() && count_own_call(false);
}

template <calls::Kind K, class LibraryCall, class Handler>
int enter(calls::Id id, LibraryCall& library, Handler handler) noexcept {
  const bool off = disabled();  // read here first where switched_off() could not tell
  count_call(off);
  if (off) return library();
  const TimedCall timed(family_of(K));  // STRATA_SUMMARY=1: this call's time, Strata's and the library's
  if constexpr (calls::flushes(K)) flush_deferred_sends();
  try {
    return handler();
  } catch (...) {
    STRATA_LOG(error, kShim, "%s: internal failure (out of memory?); returning MPI_ERR_INTERN", calls::name_of(id));
    return MPI_ERR_INTERN;
  }
}

}  // namespace strata::interposer::shim
