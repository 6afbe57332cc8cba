// What the interposer did, for tests, logs and the preload's query function.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata::interposer {

struct Counters {
  std::atomic<uint64_t> calls_intercepted{0};
  std::atomic<uint64_t> calls_passed_through{0};
  std::atomic<uint64_t> packs_by_strata{0};
  std::atomic<uint64_t> sends_packed{0};
  std::atomic<uint64_t> recvs_unpacked{0};
  std::atomic<uint64_t> spans_copied{0};  // device data moved through a host copy of its span
  std::atomic<uint64_t> requests_started{0};
  std::atomic<uint64_t> requests_completed{0};
  std::atomic<uint64_t> types_reducible{0};
  std::atomic<uint64_t> types_irreducible{0};
  std::atomic<uint64_t> collectives_by_strata{0};
  std::atomic<uint64_t> collectives_staged{0};
  std::atomic<uint64_t> sends_deferred{0};        // MPI_Isend packed and posted at the next MPI call
  std::atomic<uint64_t> deferred_flushes{0};      // flushes that packed deferred device sends
  std::atomic<uint64_t> parts_by_copy_engine{0};  // strided device parts moved by copy-engine boxes, not kernels
};

Counters& counters();

}  // namespace strata::interposer
