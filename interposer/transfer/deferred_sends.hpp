// Sends whose packing and MPI send wait for the caller's next MPI call.
//
// A halo exchange posts dozens of small device sends before it waits. Packed
// one by one, each costs a kernel launch and a wait for the device (about
// 10 us on the lent, virtualised H200), serialised. A deferred MPI_Isend
// only reserves its staging and returns a generalized request
// (MPI_Grequest_start) as the user's handle. The caller's next MPI call that
// could depend on the message flushes: every deferred send is packed in
// batched launches (device_pack_all), the device is waited for once, and
// the library's sends are posted in the order of the user's calls; a
// message of STRATA_DEVICE_STREAM_FROM bytes or more is packed and posted
// on its own (stream_from.hpp), before the ones after it are packed. The
// completion calls then complete the library's request in place of the
// user's handle (completion.cpp).
//
// What flushes (so no program waits for a message still held here): every
// intercepted call except MPI_Irecv and the datatype and pack calls (an
// MPI_Isend Strata does not defer flushes first where a deferred send to the
// same peer is held: messages between two ranks keep their order), and the flush-only wrappers of shim/flush_calls.cpp:
// the other send modes, probes, persistent starts, MPI_Request_get_status,
// blocking collectives, communicator and window creation, window
// synchronisation, collective file calls. A rank that stops calling MPI
// (computing, or waiting on something outside MPI for a peer that waits for
// its message) holds its deferred sends until it calls MPI again: the
// progress a rendezvous protocol needs anyway. STRATA_DEFER_SENDS=off turns
// deferral off.
//
// At every thread level: flushes take turns, so the messages of one thread
// to one peer keep their order even when another thread's flush posts them.
// Only messages that are not staged are deferred (the staged method
// pipelines large messages by itself), and only sends whose arguments are
// plainly valid (a bad rank or tag fails in MPI_Isend, as without Strata).
#pragma once

#include "interposer/transfer/plan.hpp"

#include <mpi.h>

#include <atomic>
#include <cstddef>

namespace strata::interposer {

// Whether an MPI_Isend planned as `plan` is deferred.
bool defers(const Plan& plan, MPI_Comm comm, int dest, int tag);

// Defers an MPI_Isend that defers() accepted: sets *request to the user's
// handle. Returns MPI_SUCCESS or the error of a failed step (then nothing
// was deferred).
int defer_isend(const Plan& plan, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request* request);

// How many sends are deferred (read without a lock on every call).
extern std::atomic<size_t> g_deferred_sends;

// True while any send is deferred (one atomic load).
inline bool have_deferred_sends() { return g_deferred_sends.load(std::memory_order_acquire) != 0; }

// Packs and posts every deferred send. A failure is raised on the send's
// communicator (its error handler) and returned by the completion of its
// request; the calls that flush go on.
void flush_deferred_sends_now() noexcept;
inline void flush_deferred_sends() noexcept {
  if (have_deferred_sends()) flush_deferred_sends_now();
}

// Before a non-blocking send to `dest` of `comm` that is not deferred:
// flushes only where a deferred send to that peer is held (messages between
// two ranks keep their order; those to other peers wait for the next call
// that flushes, still in one batch).
void flush_deferred_sends_to(MPI_Comm comm, int dest) noexcept;

// Completes and frees the user's handle of a deferred send whose library
// request completed (or was freed).
void release_user_handle(MPI_Request handle);

}  // namespace strata::interposer
