#include "interposer/transfer/pending.hpp"

#include "base/log.hpp"
#include "interposer/transfer/counters.hpp"
#include "mpi/real_mpi.hpp"

namespace strata::interposer {

using mpi::real;

int finish(PendingOp& op, MPI_Status& status, int error, bool wait) {
  counters().requests_completed.fetch_add(1, std::memory_order_relaxed);
  int rc = MPI_SUCCESS;
  if (error == MPI_SUCCESS) {
    int cancelled = 0;
    real().MPI_Test_cancelled(&status, &cancelled);
    if (!cancelled && op.receives()) rc = complete_recv(op.recv, status, wait);
    if (cancelled) op.send.direct.not_sent();  // nobody will claim a cancelled descriptor: take its slot back
    // A staged call's written mirrors start as copies of the user's bytes,
    // so they go back whatever the status says: a collective cannot be
    // cancelled, and Open MPI 4.1 leaves the cancelled flag of a file
    // request's status uninitialised (MPI_Test_cancelled often says yes).
    if (op.kind == PendingOp::Kind::staged && op.staged) rc = op.staged->copy_out();
  }
  if (op.persistent) {
    op.active = false;
  } else if (wait) {
    op = PendingOp{};  // releases the staging
  }
  return rc;
}

int restart(PendingOp& op) {
  op.active = true;
  if (op.refill_buffer != nullptr) return fill_send(op.refill, op.refill_buffer, &op.send);
  if (op.kind == PendingOp::Kind::staged && op.staged) return op.staged->copy_in();
  if (op.receives()) return refresh_recv(op.recv);
  return MPI_SUCCESS;
}

void leak(PendingOp& op) {
  op.send.leak();
  op.recv.leak();
  if (op.staged) (void)op.staged.release();  // never freed: MPI may still touch the mirrors
}

bool PendingTable::add(MPI_Request request, PendingOp&& op) {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    ops_.emplace(request, std::move(op));
    size_.store(ops_.size(), std::memory_order_release);
    publish();
    return true;
  } catch (...) {
    return false;
  }
}

std::optional<PendingOp> PendingTable::take(MPI_Request request) {
  std::optional<PendingOp> op;
  take_each(1, &request, [&](int, PendingOp& taken) { op.emplace(std::move(taken)); });
  return op;
}

MPI_Request PendingTable::library_of(MPI_Request request) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ops_.find(request);
  return it == ops_.end() ? MPI_REQUEST_NULL : it->second.library;
}

void PendingTable::put_back(MPI_Request request, PendingOp&& op) {
  if (!add(request, std::move(op))) {
    leak(op);  // MPI still owns the buffer: never free it
    STRATA_LOG(error, kP2p, "out of memory while tracking a request; its staging buffer is leaked");
  }
}

void PendingTable::orphan(MPI_Request request, PendingOp&& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    orphan_list_.emplace_back(request, std::move(op));
  } catch (...) {
    leak(op);
    return;
  }
  orphans_.store(orphan_list_.size(), std::memory_order_release);
  publish();
}

namespace {
// A freed request's operation is complete: finish it; a persistent
// request, which completion leaves allocated, is freed now.
void finish_orphan(MPI_Request& request, PendingOp& op, MPI_Status& status, int rc) {
  const bool persistent = op.persistent;
  finish(op, status, rc);
  if (persistent && request != MPI_REQUEST_NULL) real().MPI_Request_free(&request);
  op = PendingOp{};
}
}  // namespace

void PendingTable::progress_orphans() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < orphan_list_.size();) {
    int done = 0;
    MPI_Status status;
    int rc = real().MPI_Test(&orphan_list_[i].first, &done, &status);
    if (rc != MPI_SUCCESS || done) {
      finish_orphan(orphan_list_[i].first, orphan_list_[i].second, status, rc);
      orphan_list_.erase(orphan_list_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  orphans_.store(orphan_list_.size(), std::memory_order_release);
  publish();
}

void PendingTable::drain_orphans() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [request, op] : orphan_list_) {
    MPI_Status status;
    int rc = real().MPI_Wait(&request, &status);
    finish_orphan(request, op, status, rc);
  }
  orphan_list_.clear();
  orphans_.store(0, std::memory_order_release);
  publish();
}

void PendingTable::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ops_.empty()) {
    STRATA_LOG(warn, kP2p, "%zu Strata requests were never completed before MPI_Finalize", ops_.size());
  }
  ops_.clear();
  size_.store(0, std::memory_order_release);
  publish();
}

std::atomic<size_t> g_pending_requests{0};

void PendingTable::publish() {
  g_pending_requests.store(size_.load(std::memory_order_relaxed) + orphans_.load(std::memory_order_relaxed),
                           std::memory_order_release);
}

PendingTable& pending() {
  static PendingTable* table = new PendingTable();  // never destroyed
  return *table;
}

}  // namespace strata::interposer
