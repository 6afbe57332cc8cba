// The recorder's hooks, one scope object per communication call. The
// interposer (interposer/transfer) and Strata's collectives (collectives/
// api.cpp) open one at the top of each call:
//
//   fault::P2pScope rec(fault::OpKind::send, comm, count, type, dest, tag);
//
// When neither the recorder nor an injected fault is active a scope costs
// one predictable branch on construction and one on destruction. Scopes do
// not nest: the interposer's MPI_Allreduce that runs Strata's allreduce is
// recorded once, by the outer scope.
#pragma once

#include "fault/op_kind.hpp"

#include <mpi.h>

#include <atomic>
#include <cstdint>

// The hooks' per-thread state lives in static TLS: the preload library is
// loaded at start-up, when the static TLS block has room for these few
// bytes, and an access is then one instruction instead of a call to
// __tls_get_addr (whose dynamic TLS blocks LeakSanitizer's scan also trips
// over).
#define STRATA_FAULT_TLS __attribute__((tls_model("initial-exec")))

namespace strata::fault {

namespace hooks {
// Recorder or injection active (set at start-up, cleared at shutdown).
inline std::atomic<bool> g_on{false};
inline bool on() { return __builtin_expect(g_on.load(std::memory_order_acquire), 0); }  // a plain load on x86
}  // namespace hooks

// Send, receive, sendrecv (peer2 = the source) and their non-blocking forms
// (request: the call's request, followed to its completion).
class P2pScope {
 public:
  P2pScope(OpKind kind, MPI_Comm comm, int count, MPI_Datatype type, int peer, int tag, MPI_Request* request = nullptr,
           int peer2 = MPI_PROC_NULL) noexcept {
    if (hooks::on()) begin(kind, comm, count, type, peer, tag, request, peer2);
  }
  ~P2pScope() {
    if (entered_) end();
  }
  P2pScope(const P2pScope&) = delete;
  P2pScope& operator=(const P2pScope&) = delete;

 private:
  void begin(OpKind kind, MPI_Comm comm, int count, MPI_Datatype type, int peer, int tag, MPI_Request* request,
             int peer2) noexcept;
  void end() noexcept;
  uint64_t index_ = 0;
  MPI_Request* request_ = nullptr;
  bool entered_ = false;
  bool recorded_ = false;
};

// A collective. The first form takes MPI's count and datatype (the
// interposer), the second bytes and an optional device stream (Strata's
// collectives; the device timer hook, if set, times the work on it).
class CollScope {
 public:
  CollScope(OpKind kind, MPI_Comm comm, int count, MPI_Datatype type, int root = -1) noexcept {
    if (hooks::on()) begin(kind, comm, bytes_of(count, type), root, nullptr);
  }
  CollScope(OpKind kind, MPI_Comm comm, uint64_t bytes, int root, void* stream) noexcept {
    if (hooks::on()) begin(kind, comm, bytes, root, stream);
  }
  ~CollScope() {
    if (entered_) end();
  }
  CollScope(const CollScope&) = delete;
  CollScope& operator=(const CollScope&) = delete;

 private:
  static uint64_t bytes_of(int count, MPI_Datatype type) noexcept;
  void begin(OpKind kind, MPI_Comm comm, uint64_t bytes, int root, void* stream) noexcept;
  void end() noexcept;
  uint64_t index_ = 0;
  uint32_t comm_ = 0;
  uint64_t seq_ = 0;
  void* stream_ = nullptr;
  void* device_begin_ = nullptr;
  bool entered_ = false;
  bool recorded_ = false;
};

// A completion call: ends the records of the followed requests it
// finishes. Blocking ones (wait, waitall, waitany, waitsome) are recorded
// themselves; tests are not (they are polled).
class WaitScope {
 public:
  WaitScope(bool blocking, int count, MPI_Request* requests) noexcept {
    if (hooks::on()) begin(blocking, count, requests);
  }
  ~WaitScope() {
    if (entered_) end();
  }
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  void begin(bool blocking, int count, MPI_Request* requests) noexcept;
  void end() noexcept;
  MPI_Request* requests_ = nullptr;  // null: nothing followed among them
  uint64_t index_ = 0;
  bool entered_ = false;
  bool recorded_ = false;
};

}  // namespace strata::fault
