// What a flight record describes: the kind of communication, and the
// helpers every part of fault/ uses to name and classify it.
#pragma once

#include <cstdint>

namespace strata::fault {

enum class OpKind : uint8_t {
  none = 0,
  // Point-to-point. Blocking calls are recorded from entry to return;
  // non-blocking ones from the post to the completion call that finished them.
  send,
  recv,
  sendrecv,
  isend,
  irecv,
  wait,  // MPI_Wait/Waitall/Waitany/Waitsome (the blocking completion calls)
  // Collectives (a sequence number per communicator).
  allreduce,
  reduce_scatter,
  allgather,
  bcast,
  reduce,
  alltoallv,
  neighbor_alltoall,
  secondary_partition,      // Strata's hpZ helpers
  fused_allreduce_rmsnorm,  // strata/fused.hpp
  count_,
};

const char* to_string(OpKind kind);
// Parses a name as to_string writes it; false when unknown.
bool parse_op_kind(const char* text, OpKind* out);

inline bool is_collective(OpKind k) { return k >= OpKind::allreduce && k < OpKind::count_; }
inline bool is_p2p(OpKind k) { return k >= OpKind::send && k <= OpKind::irecv; }
inline bool is_nonblocking(OpKind k) { return k == OpKind::isend || k == OpKind::irecv; }
// Sends whose completion time says something about the link to the peer.
inline bool is_send_side(OpKind k) { return k == OpKind::send || k == OpKind::isend || k == OpKind::sendrecv; }

// Size classes for learned durations: 0 for 0 bytes, then one per power of
// two up to 2^kSizeClasses-2 bytes.
inline constexpr int kSizeClasses = 40;
inline int size_class(uint64_t bytes) {
  if (bytes == 0) return 0;
  const int c = 64 - __builtin_clzll(bytes);
  return c < kSizeClasses ? c : kSizeClasses - 1;
}

}  // namespace strata::fault
