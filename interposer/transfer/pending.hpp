// Requests the interposer created, kept until the user completes them.
//
// A non-blocking transfer that Strata packed or will unpack is an ordinary
// MPI request on a staging buffer; this table remembers what to do when it
// completes (release the staging buffer; for a receive, unpack first). Every
// completion call takes the entries of its requests out of the table before
// calling the library and puts back the ones that did not complete: under
// MPI_THREAD_MULTIPLE a completed request's handle may be reused at once by
// another thread, so no entry may stay keyed by a handle the library freed.
#pragma once

#include <strata/layout.hpp>

#include "interposer/transfer/host_staging.hpp"
#include "interposer/transfer/plan.hpp"

#include <mpi.h>

#include <atomic>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata::interposer {

struct PendingOp {
  enum class Kind : uint8_t { send, recv };
  Kind kind = Kind::send;
  HostStaging staging;
  void* user_buffer = nullptr;  // receives: where to unpack
  BufferLayout layout;          // receives: of (count, datatype)
};

// Unpacks the bytes a receive into `staging` brought (its status says how
// many: a shorter message fills only the first elements, as MPI does).
void unpack_arrived(const StridedBlock& layout, const HostStaging& staging, void* user_buffer,
                    const MPI_Status& status);

// Finishes a completed operation: for a receive that succeeded and was not
// cancelled, unpacks the bytes that arrived. `error` is the request's error
// code (MPI_SUCCESS normally).
void finish(PendingOp& op, const MPI_Status& status, int error);

class PendingTable {
 public:
  // False when `request` could not be recorded (out of memory): the caller
  // must then keep the staging buffer alive forever (leak it).
  bool add(MPI_Request request, PendingOp&& op);
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  std::optional<PendingOp> take(MPI_Request request);
  void put_back(MPI_Request request, PendingOp&& op);

  // MPI_Request_free on a Strata request: the operation still has to finish
  // (a receive still has to be unpacked), so the request is kept and tested
  // from later intercepted calls and waited for at MPI_Finalize.
  void orphan(MPI_Request request, PendingOp&& op);
  bool has_orphans() const { return orphans_.load(std::memory_order_acquire) != 0; }
  void progress_orphans();
  void drain_orphans();
  // Drops everything (MPI_Finalize; staging buffers of requests the user
  // never completed are freed).
  void clear();

 private:
  std::mutex mutex_;
  // Nodes come from a pool guarded by mutex_: no malloc per request once warm.
  std::pmr::unsynchronized_pool_resource node_pool_;
  std::pmr::unordered_map<MPI_Request, PendingOp> ops_{&node_pool_};
  std::vector<std::pair<MPI_Request, PendingOp>> orphan_list_;
  std::atomic<size_t> size_{0};
  std::atomic<size_t> orphans_{0};
};

PendingTable& pending();

}  // namespace strata::interposer
