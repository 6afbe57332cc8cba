// Host receives watched for device-direct descriptors, without a Strata
// request (docs/device.md, "What it costs where it cannot help").
//
// While the device-direct transport is on, any receive of a descriptor's size or more
// may be matched by a descriptor (direct.hpp). A non-blocking receive of
// contiguous host data is posted to the library as the user asked, into the
// user's buffer, and only remembered here: its request handle, buffer,
// count, datatype and communicator. The completion call that finishes the
// request takes the entry out and, only where the status says exactly a
// descriptor's size arrived, looks at the bytes (sides.hpp,
// complete_host_recv). No staging, no plan, no lock: a slot claimed with
// one compare-and-swap, found again by the handle's hash, freed with one
// store. A full neighbourhood refuses the entry, and the caller tracks the
// receive as a full Strata request instead (pending.hpp).
//
// Every call that can free a request takes its entry out (the completion
// calls, MPI_Request_free, MPI_Request_get_status once it reports
// completion): a handle the library reuses for another request must not
// find an old entry.
#pragma once

#include "interposer/transfer/pending.hpp"

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace strata::interposer {

struct WatchedRecv {
  void* buffer{};
  int64_t count{};
  MPI_Datatype type{};
  MPI_Comm comm{};  // where a failure at completion is reported
};

// Entries in the table (one atomic load: the completion calls' fast path).
extern std::atomic<size_t> g_watched_recvs;
inline bool watched_empty() noexcept { return g_watched_recvs.load(std::memory_order_acquire) == 0; }

class WatchedRecvs {
 public:
  static constexpr size_t kSlots = 2048;
  static constexpr int kProbes = 16;

  // False when the handle's neighbourhood is full.
  bool add(MPI_Request request, const WatchedRecv& what) noexcept;
  // The entry of `request`, taken out; false when there is none.
  bool take(MPI_Request request, WatchedRecv* what) noexcept;
  // MPI_Finalize: receives the user never completed are forgotten.
  void clear() noexcept;

 private:
  struct Slot {
    std::atomic<uint64_t> key{0};  // 0: free; kClaimed: being written
    WatchedRecv what;
  };
  Slot slots_[kSlots];
};

WatchedRecvs& watched_recvs() noexcept;

// A watched receive as a full Strata request (a receive the library serves,
// no staging): where the table has no room for it.
PendingOp as_pending(const WatchedRecv& w);

}  // namespace strata::interposer
