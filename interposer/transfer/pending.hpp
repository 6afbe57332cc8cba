// Requests the interposer created, kept until the user completes them.
//
// A non-blocking transfer that Strata prepared is an ordinary MPI request on
// a staging buffer; this table remembers what to do when it completes
// (release the staging; for a receive, move the bytes to the user's buffer
// first). Every completion call takes the entries of its requests out of the
// table before calling the library and puts back the ones that did not
// complete: under MPI_THREAD_MULTIPLE a completed request's handle may be
// reused at once by another thread, so no entry may stay keyed by a handle
// the library freed.
//
// One handle can stand for several requests at once: a send the library
// completed on the spot may come back as a shared, already complete request
// (Open MPI's ompi_request_empty, MPICH's lightweight requests). Such
// entries are all complete sends, which only release staging, so the table
// is a multimap and a completion takes any one entry of its handle.
#pragma once

#include "interposer/transfer/sides.hpp"
#include "interposer/transfer/staged_call.hpp"

#include <mpi.h>

#include <atomic>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata::interposer {

struct PendingOp {
  // send: release the staging; recv: unpack what arrived first; sendrecv:
  // both; staged: copy the call's written mirrors back (staged_call.hpp).
  enum class Kind : uint8_t { send, recv, sendrecv, staged };
  Kind kind = Kind::send;
  // A deferred send (deferred_sends.hpp): the library's request, which the
  // completion calls wait for in place of the user's handle.
  MPI_Request library = MPI_REQUEST_NULL;
  Outgoing send;
  Incoming recv;
  std::unique_ptr<StagedCall> staged;
  // Persistent requests (MPI_*_init): the entry stays until MPI_Request_free;
  // `active` from MPI_Start to the completion that finishes it. A
  // persistent send packs the user's buffer again at every start.
  bool persistent = false;
  bool active = true;
  Plan refill;  // persistent send: the plan of its buffer
  const void* refill_buffer = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;  // where a failure at completion is reported
  bool receives() const { return kind == Kind::recv || kind == Kind::sendrecv; }
};

// Finishes a completed operation: for a receive that succeeded and was not
// cancelled, moves the bytes that arrived to the user's buffer; for a staged
// call, copies its written mirrors back. `error` is the request's error code
// (MPI_SUCCESS normally). Returns MPI_SUCCESS, or the error of a failed
// Strata step. With `wait` false, device work may still be queued on
// return: keep `op` alive until wait_for_queued_unpacks(). A persistent
// operation keeps its staging and becomes inactive; any other releases it
// (when `wait`).
int finish(PendingOp& op, MPI_Status& status, int error, bool wait = true);

// MPI_Start on a persistent operation: packs a send's buffer again, fills a
// staged call's read mirrors, copies a receive's device span to its host
// copy again (refresh_recv); marks it active.
int restart(PendingOp& op);

class PendingTable {
 public:
  // False when `request` could not be recorded (out of memory): the caller
  // must then keep the staging alive forever (leak it).
  bool add(MPI_Request request, PendingOp&& op);
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  std::optional<PendingOp> take(MPI_Request request);
  // A completion call's entries under one lock: for each of `requests` that
  // is Strata's, `take(i, op)` moves the operation out (it must neither
  // throw nor call back into the table; it may change requests[i], which is
  // not read again), and the entry goes.
  template <class Take>
  void take_each(int count, const MPI_Request* requests, Take take) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int i = 0; i < count; ++i) {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      auto it = ops_.find(requests[i]);
      if (it == ops_.end()) continue;
      take(i, it->second);
      ops_.erase(it);
    }
    size_.store(ops_.size(), std::memory_order_release);
    publish();
  }
  // The library's request of a deferred send's handle (MPI_REQUEST_NULL
  // when `request` is no such handle); the entry stays.
  MPI_Request library_of(MPI_Request request);
  void put_back(MPI_Request request, PendingOp&& op);

  // MPI_Request_free on a Strata request: the operation still has to finish
  // (a receive still has to be unpacked), so the request is kept and tested
  // from later intercepted calls and waited for at MPI_Finalize.
  void orphan(MPI_Request request, PendingOp&& op);
  bool has_orphans() const { return orphans_.load(std::memory_order_acquire) != 0; }
  void progress_orphans();
  void drain_orphans();
  // Drops everything (MPI_Finalize; staging of requests the user never
  // completed is freed).
  void clear();

 private:
  std::mutex mutex_;
  // Nodes come from a pool guarded by mutex_: no malloc per request once warm.
  std::pmr::unsynchronized_pool_resource node_pool_;
  std::pmr::unordered_multimap<MPI_Request, PendingOp> ops_{&node_pool_};
  std::vector<std::pair<MPI_Request, PendingOp>> orphan_list_;
  std::atomic<size_t> size_{0};
  std::atomic<size_t> orphans_{0};
  void publish();  // g_pending_requests, under mutex_
};

PendingTable& pending();

// No Strata request at all, orphans included (one atomic load).
extern std::atomic<size_t> g_pending_requests;
inline bool pending_empty() { return g_pending_requests.load(std::memory_order_acquire) == 0; }

// Keeps the staging of an operation whose request could not be recorded.
void leak(PendingOp& op);

}  // namespace strata::interposer
