// One flight record: a slot of the per-rank ring (Slot, shared between the
// threads that write it and the agent, the dump and the signal handler that
// read it) and its plain copy (Record).
#pragma once

#include "fault/op_kind.hpp"

#include <atomic>
#include <cstdint>

namespace strata::fault {

enum class OpState : uint8_t {
  active = 1,  // in the call (blocking, and non-blocking until the call returns)
  done = 2,
  lost = 3,    // non-blocking, completed where the recorder could not see it (the request table was full)
  posted = 4,  // non-blocking: the call returned, the request is not complete yet
};
const char* to_string(OpState state);

// Peers are world ranks; these mark the others.
inline constexpr int32_t kNoPeer = -1;
inline constexpr int32_t kAnyPeer = -2;   // MPI_ANY_SOURCE
inline constexpr int32_t kNullPeer = -3;  // MPI_PROC_NULL
inline constexpr uint32_t kNoComm = 0xffffffffu;

// The plain copy of a record. In the ring, times are ticks (fault/clock.hpp);
// in_ns() turns them into CLOCK_MONOTONIC nanoseconds.
struct Record {
  uint64_t index = 0;  // position in the rank's record stream (0, 1, ...)
  OpKind kind = OpKind::none;
  OpState state = OpState::active;
  uint32_t comm = kNoComm;  // index into this rank's communicator table (comms.hpp)
  int32_t peer = kNoPeer;   // destination / source / root, as a world rank; wait: the first followed request's
  int32_t peer2 = kNoPeer;  // sendrecv: the source; wait: the first followed request's kind (OpKind)
  int32_t tag = 0;
  uint64_t seq = 0;      // collectives: number on the communicator (1, 2, ...); sends/receives: per-peer ordinal
  uint64_t seq2 = 0;     // sendrecv: the receive's per-peer ordinal
  uint64_t bytes = 0;    // this rank's payload; wait: the number of requests
  int64_t enq_ns = 0;    // the call entered Strata (non-blocking: the post)
  int64_t start_ns = 0;  // blocking: = enq_ns; non-blocking: the first blocking wait that included it (0: none)
  int64_t end_ns = 0;    // left, or completed (0 while active)
  int64_t dev_ns = -1;   // device-side duration from the device timer hook (-1: none; kept in DeviceTimes)
  // Time the calling thread spent outside recorded communication before this
  // call: since its previous collective (collectives), since its previous
  // call (others). The fail-slow detector's measure of computation.
  int64_t compute_ns = 0;
};

// enq/start/end and compute in nanoseconds (Ring::read gives ticks).
Record in_ns(Record r);

// The shared slot. `gen` is a sequence lock: odd while a writer holds the
// slot, and every write (a new record or an update) moves it on by two, so
// a reader that saw the same even value before and after its copy saw no
// write at all. `index` names the record the slot holds.
struct alignas(64) Slot {
  std::atomic<uint64_t> gen{0};
  std::atomic<uint64_t> index{~uint64_t{0}};  // none yet
  std::atomic<uint8_t> kind{0};
  std::atomic<uint8_t> state{0};
  std::atomic<uint32_t> comm{kNoComm};
  std::atomic<int32_t> peer{kNoPeer};
  std::atomic<int32_t> peer2{kNoPeer};
  std::atomic<int32_t> tag{0};
  std::atomic<uint64_t> seq{0};
  std::atomic<uint64_t> seq2{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<int64_t> enq_ns{0};
  std::atomic<int64_t> start_ns{0};
  std::atomic<int64_t> end_ns{0};
  std::atomic<int64_t> compute_ns{0};
};

}  // namespace strata::fault
