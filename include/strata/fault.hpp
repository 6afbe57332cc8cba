// Communication-driven fault detection (docs/fault.md).
//
// Every communication Strata performs or intercepts is recorded per rank in
// a bounded ring (the flight recorder). A watchdog thread per rank notices
// operations that take far longer than they usually do; over an
// out-of-band TCP channel, which works while MPI is stuck, the ranks'
// states reach a coordinator (the lowest live rank), which names the ranks
// or links at fault and classifies the fault as in C4: comm hang, non-comm
// hang, comm slow, non-comm slow. What happens then is the
// STRATA_FAULT_ACTION policy: report, abort (exit code
// STRATA_FAULT_EXIT_CODE), or exclude (write the hosts and GPUs to avoid,
// then abort).
//
// The interposer (libstrata_preload.so) starts and stops all of this at
// MPI_Init / MPI_Finalize when STRATA_FAULT=1. An application that links
// libstrata.so without the interposer calls start() after MPI_Init and
// stop() before MPI_Finalize to have its Strata collectives recorded.
#pragma once

#include <strata/export.h>
#include <strata/status.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::fault {

// C4's four classes.
enum class FaultClass { comm_hang, noncomm_hang, comm_slow, noncomm_slow };
STRATA_API const char* to_string(FaultClass c) noexcept;  // "comm hang", "non-comm hang", ...

struct Diagnosis {
  FaultClass fault_class = FaultClass::comm_hang;
  std::string detector;                    // hang, death, skew, link, probe
  std::vector<int> ranks;                  // culprit world ranks
  std::vector<std::pair<int, int>> links;  // culprit links (world ranks, smaller first)
  std::vector<std::string> hosts;          // the culprits' hosts
  std::string op;                          // the operation concerned ("allreduce"), if any
  std::string comm;                        // its communicator id (hex; "0" is MPI_COMM_WORLD)
  uint64_t seq = 0;                        // its number on the communicator (collectives) or message ordinal
  std::vector<int> missing;                // hang: ranks that never entered the operation
  int64_t detected_ns = 0;                 // coordinator clock (CLOCK_MONOTONIC)
  int64_t onset_ns = 0;                    // first evidence (hang: the op's start; slow: the first late sample)
  uint64_t onset_seq = 0;                  // slow: the op number / message ordinal of the first late sample
  uint64_t detect_seq = 0;                 // slow: the op number / message ordinal that raised the alarm
  std::string message;                     // one line for people
};

// Times work on a device stream, so that records of device collectives
// carry the device's duration (portability/ installs one; fault/ includes
// no device header). mark() records an event on `stream` and returns it
// (null: none); elapsed() gives the nanoseconds between two marks once both
// completed, returning 1 when done (and releasing both), 0 while pending,
// -1 on error (releasing both).
struct DeviceTimer {
  void* (*mark)(void* stream, void* user) = nullptr;
  int (*elapsed)(void* begin, void* end, int64_t* ns, void* user) = nullptr;
  void* user = nullptr;
};

// Starts the recorder, the watchdog and the out-of-band channel on every
// rank of MPI_COMM_WORLD (collective; after MPI_Init, by every rank) when
// STRATA_FAULT=1 or `force`. A second call does nothing.
STRATA_API Status start(bool force = false) noexcept;
// Final exchange with the coordinator, dump (STRATA_FAULT_DUMP_AT_EXIT),
// stop the watchdog. Collective over the out-of-band channel only: call it
// before MPI_Finalize, on every rank.
STRATA_API Status stop() noexcept;
STRATA_API bool running() noexcept;

// Writes this rank's flight record now (STRATA_FAULT_DIR/<job>.rank<R>.jsonl).
STRATA_API Status dump(const char* reason = "api") noexcept;

// Diagnoses this rank has learned of (the coordinator sends them to every rank).
STRATA_API std::vector<Diagnosis> diagnoses() noexcept;

// Installs (or, with null, removes) the device timer; the struct must live
// until stop().
STRATA_API void set_device_timer(const DeviceTimer* timer) noexcept;

}  // namespace strata::fault
