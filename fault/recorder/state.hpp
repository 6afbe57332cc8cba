// The recorder's process-wide state, shared by the hooks, the agent, the
// dump writer and the signal handler. Set up once by the runtime
// (fault/runtime.cpp) after MPI_Init; read-only afterwards except for the atomics.
#pragma once

#include "fault/recorder/comms.hpp"
#include "fault/recorder/device_times.hpp"
#include "fault/recorder/requests.hpp"
#include "fault/recorder/ring.hpp"

#include <strata/fault.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

namespace strata::fault {

struct ProcessState {
  int rank = -1;
  int size = 0;
  int64_t start_ns = 0;
  bool recording = false;
  std::unique_ptr<Ring> ring;  // null unless recording
  CommTable comms;
  RequestTable requests;
  std::unique_ptr<std::atomic<uint64_t>[]> sent_to;  // per world peer: messages sent
  std::unique_ptr<std::atomic<uint64_t>[]> received_from;
  std::atomic<const DeviceTimer*> device_timer{nullptr};
  // Which collectives on a stream are timed on the device: at least every-th
  // call of a thread since its last timed one (0: none) and at least
  // period_ticks since it (STRATA_FAULT_DEVICE_EVERY, _PERIOD_US).
  std::atomic<uint64_t> device_every{1};
  std::atomic<uint64_t> device_period_ticks{0};
  // Collectives on a stream (stream-ordered: the host call only enqueues)
  // are recorded only where their sequence number is a multiple of this
  // power of two. The watchdog sets it each tick from the rate of
  // collectives, so that a tick's records stay within what a heartbeat
  // ships (Scanner::stream_stride); the heartbeat thinned them to the same
  // numbers anyway, and at 100 000 calls a second the ring's writes and
  // the watchdog's reading of every record cost the caller about 1-2%
  // (2 H200, 64 KiB allreduce; fault-overhead-h100x2.md).
  std::atomic<uint64_t> stream_stride{1};
  DeviceMarks device_marks;                 // timed calls' marks, for the watchdog
  DeviceTimes device_times;                 // their resolved durations, for dumps
  std::atomic<int64_t> clock_offset_ns{0};  // this rank's clock minus the coordinator's (oob ping)
  std::atomic<int> dumping{0};              // a dump is being written (dumps do not overlap)
  char host[64] = {0};
  char job[48] = {0};          // the same on every rank of a job (rank 0's start time and pid)
  char dump_path[1024] = {0};  // DIR/<job>.rank<R>.jsonl
  char dump_tmp[1040] = {0};   // written there first, then renamed
  char inject_text[512] = {0};
};

ProcessState& process();

}  // namespace strata::fault
