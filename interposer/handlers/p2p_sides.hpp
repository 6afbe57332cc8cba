// What the point-to-point handlers share: planning one side of a call,
// handing the library the prepared buffer in place of the user's, and
// keeping a started request's staging until its completion.
#pragma once

#include "interposer/calls/call_ids.hpp"
#include "interposer/calls/roles.hpp"
#include "interposer/transfer/pending.hpp"
#include "interposer/transfer/sides.hpp"

#include <mpi.h>

#include <climits>
#include <cstdint>

namespace strata::interposer::handlers {

enum class Side { send, recv };

// The plan for one side; MPI_PROC_NULL peers and GPU-aware libraries get
// the library (plan.hpp). Traced at STRATA_LOG=debug.
Plan plan_side(calls::Id id, Side side, int peer, const calls::Buf& buf);

// Points the call's buffer, count and datatype arguments at what Strata
// prepared.
void hand_over(const calls::Buf& buf, const Outgoing& out);
void hand_over(const calls::Buf& buf, const Incoming& in);

// The pass-through test, without a lock or an allocation: host data of a
// datatype whose elements are single runs of bytes (predefined types once
// seen, contiguous derived ones from their commit) goes to the library as
// it is. Traced at STRATA_LOG=debug.
bool passes_through(calls::Id id, Side side, const calls::Buf& buf) noexcept;
// With the device-direct transport on: can a receive into `buf` get a
// descriptor (direct.hpp)? Not one too small to hold one: a larger message
// would be MPI_ERR_TRUNCATE there either way.
bool may_get_descriptor(const calls::Buf& buf) noexcept;
// Host memory of a datatype whose elements are single runs of bytes.
bool contiguous_host(const calls::Buf& buf) noexcept;

// Registers a started request with what its completion must do.
void track(MPI_Request request, PendingOp&& op);

// The count the fault recorder sees (it counts in int).
inline int clamp_count(int64_t count) { return count > INT_MAX ? INT_MAX : static_cast<int>(count); }

// Where errors without a communicator go: MPI_COMM_SELF from MPI-4 on,
// MPI_COMM_WORLD before.
MPI_Comm default_comm();

// MPI_Sendrecv_replace's one buffer, sent and then received into: returns
// kLibrary when the library takes it as it is, else prepares `in` (packed
// bytes of the user's data in its staging, which the arriving bytes then
// replace) or returns an MPI error class.
constexpr int kLibrary = -1;
int prepare_replace(calls::Id id, const calls::Buf& buf, int dest, int source, Outgoing* unused, Incoming* in);

}  // namespace strata::interposer::handlers
