// Helpers for MPI GoogleTest programs (see mpi_test_main.cpp).
#pragma once

#include <cstdint>

namespace strata_test {

int world_rank();
int world_size();

// True when the test runs as the `_preload` variant (the harness sets
// STRATA_TEST_EXPECT_PRELOAD=1 next to LD_PRELOAD).
bool expect_preload();

// The interposer's counters, found at run time so that plain MPI programs
// need not link Strata; null when the interposer is not loaded. The layout
// mirrors strata_preload_counters in interposer/shim/counters.h.
struct StrataCounters {
  uint64_t version;
  uint64_t calls_intercepted;
  uint64_t calls_passed_through;
  uint64_t packs_by_strata;     // MPI_Pack/MPI_Unpack done by Strata's engine
  uint64_t sends_packed;        // send-side transfers packed by Strata
  uint64_t recvs_unpacked;      // receive-side transfers unpacked by Strata
  uint64_t requests_completed;  // Strata requests finished through a completion call
  uint64_t types_reducible;
  uint64_t types_irreducible;
  uint64_t requests_started;
  uint64_t spans_copied;
  uint64_t collectives_by_strata;  // version 3
  uint64_t collectives_staged;     // version 3
  uint64_t sends_deferred;         // version 4
  uint64_t deferred_flushes;       // version 4
  uint64_t parts_by_copy_engine;   // version 5
  uint64_t collective_decisions;   // version 6: equal on every rank after each collective
  uint64_t sends_direct;           // version 7: device sends a node peer pulled through IPC
  uint64_t recvs_direct;           // version 7
  uint64_t direct_rehomed;         // version 7
  uint64_t flush_pack_ns;          // version 8: times in ns (interposer/transfer/counters.hpp)
  uint64_t direct_pull_ns;         // version 8
  uint64_t unpack_wait_ns;         // version 8
  uint64_t receiver_wait_ns;       // version 8
  uint64_t pinned_allocated;       // version 9
  uint64_t staged_unpinned;        // version 9
  uint64_t deferred_pack_groups;   // version 10
  uint64_t recvs_finished_early;   // version 10
  uint64_t sends_ahead_of_pack;    // version 11
  uint64_t reads_after_event;      // version 11
  uint64_t pack_waits_queued;      // version 11
  uint64_t kernel_copies;          // version 11
  uint64_t staging_evicted;        // version 12
  uint64_t sends_in_chunks;        // version 13
  uint64_t recvs_in_chunks;        // version 13
  uint64_t contiguous_by_kernels;  // version 14
};
const StrataCounters* preload_counters();

// MPI_MIN over all ranks of a flag: true only when every rank says true.
bool all_ranks_agree(bool value);

}  // namespace strata_test

// Skips the test (on every rank alike) when the job has fewer ranks.
#define STRATA_REQUIRE_RANKS(n)                                                                  \
  do {                                                                                           \
    if (::strata_test::world_size() < (n)) GTEST_SKIP() << "needs at least " << (n) << " ranks"; \
  } while (0)
