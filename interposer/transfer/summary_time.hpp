// STRATA_SUMMARY's time per path: where an intercepted call's time goes, in
// Strata's own code or in the MPI library. Started at MPI_Init on a rank
// that set STRATA_SUMMARY=1 (start_call_timing), and then:
//   - every call that Strata's handlers take (the shim's enter(): not the
//     pass-through) is timed whole, by call family (TimedCall);
//   - every call of the library through real() (mpi/real_mpi.hpp) is timed
//     by a trampoline that replaces the table's entry: inside a handler it
//     is the library's share of that family's call, outside (the wrappers'
//     pass-through, STRATA_DISABLE=1) a call passed straight to the library.
// Strata's own time in a family = the calls' time - the library's share.
// The library calls Strata makes in MPI_Init after the start (a few
// collectives learning the job) count as passed straight through.
// Costs two clock reads per call and per library call, only where the
// summary was asked for; nothing otherwise (one relaxed load per handled
// call, none on the pass-through).
#pragma once

#include "interposer/calls/call_kinds.hpp"

#include <atomic>
#include <cstdint>

namespace strata::interposer {

enum class CallFamily : uint8_t { p2p, collective, completion, other };
constexpr int kCallFamilies = 4;
const char* to_string(CallFamily f);  // "p2p", "collective", ...

constexpr CallFamily family_of(calls::Kind k) {
  switch (k) {
    case calls::Kind::send:
    case calls::Kind::isend:
    case calls::Kind::send_init:
    case calls::Kind::recv:
    case calls::Kind::irecv:
    case calls::Kind::recv_init:
    case calls::Kind::mrecv:
    case calls::Kind::imrecv:
    case calls::Kind::sendrecv:
    case calls::Kind::sendrecv_replace:
    case calls::Kind::isendrecv:
    case calls::Kind::isendrecv_replace: return CallFamily::p2p;
    case calls::Kind::routed:
    case calls::Kind::packed:
    case calls::Kind::coll:
    case calls::Kind::icoll:
    case calls::Kind::coll_init: return CallFamily::collective;
    case calls::Kind::completion: return CallFamily::completion;
    default: return CallFamily::other;  // setup, datatypes, probes and barrier (flush), local, files
  }
}

// The clock reads are taken only once this is set (start_call_timing).
extern std::atomic<bool> g_time_calls;

// Swaps real()'s entries for the timing trampolines and starts counting;
// once, at MPI_Init, before other threads call MPI.
void start_call_timing();

// This rank's totals since start_call_timing.
struct CallTimes {
  uint64_t passthrough_calls = 0;       // library calls outside a handler
  uint64_t passthrough_library_ns = 0;  // their time
  uint64_t calls[kCallFamilies] = {};   // calls through the handlers
  uint64_t total_ns[kCallFamilies] = {};
  uint64_t library_ns[kCallFamilies] = {};
};
CallTimes call_times();

// Times one handled call (the shim's enter()): a no-op unless timing is on
// and this thread is not inside a timed call already.
class TimedCall {
 public:
  explicit TimedCall(CallFamily family) noexcept {
    if (__builtin_expect(g_time_calls.load(std::memory_order_relaxed), 0)) start(family);
  }
  ~TimedCall() {
    if (start_ns_ != 0) stop();
  }
  TimedCall(const TimedCall&) = delete;
  TimedCall& operator=(const TimedCall&) = delete;

 private:
  void start(CallFamily family) noexcept;
  void stop() noexcept;
  uint64_t start_ns_ = 0;
  CallFamily family_ = CallFamily::other;
};

}  // namespace strata::interposer
