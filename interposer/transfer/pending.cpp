#include "interposer/transfer/pending.hpp"

#include "base/log.hpp"
#include "interposer/mpi/real_mpi.hpp"
#include "interposer/transfer/counters.hpp"

namespace strata::interposer {

int finish(PendingOp& op, const MPI_Status& status, int error, bool wait) {
  counters().requests_completed.fetch_add(1, std::memory_order_relaxed);
  int rc = MPI_SUCCESS;
  if (op.kind == PendingOp::Kind::recv && error == MPI_SUCCESS) {
    int cancelled = 0;
    PMPI_Test_cancelled(&status, &cancelled);
    if (!cancelled) rc = complete_recv(op.recv, status, wait);
  }
  if (wait) op = PendingOp{};  // releases the staging
  return rc;
}

void leak(PendingOp& op) {
  op.send.leak();
  op.recv.leak();
}

bool PendingTable::add(MPI_Request request, PendingOp&& op) {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    ops_.emplace(request, std::move(op));
    size_.store(ops_.size(), std::memory_order_release);
    return true;
  } catch (...) {
    return false;
  }
}

std::optional<PendingOp> PendingTable::take(MPI_Request request) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ops_.find(request);
  if (it == ops_.end()) return std::nullopt;
  std::optional<PendingOp> op(std::move(it->second));
  ops_.erase(it);
  size_.store(ops_.size(), std::memory_order_release);
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
}

void PendingTable::progress_orphans() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < orphan_list_.size();) {
    int done = 0;
    MPI_Status status;
    int rc = mpi::real().Test(&orphan_list_[i].first, &done, &status);
    if (rc != MPI_SUCCESS || done) {
      finish(orphan_list_[i].second, status, rc);
      orphan_list_.erase(orphan_list_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  orphans_.store(orphan_list_.size(), std::memory_order_release);
}

void PendingTable::drain_orphans() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [request, op] : orphan_list_) {
    MPI_Status status;
    int rc = mpi::real().Wait(&request, &status);
    finish(op, status, rc);
  }
  orphan_list_.clear();
  orphans_.store(0, std::memory_order_release);
}

void PendingTable::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ops_.empty()) {
    STRATA_LOG(warn, kP2p, "%zu Strata requests were never completed before MPI_Finalize", ops_.size());
  }
  ops_.clear();
  size_.store(0, std::memory_order_release);
}

PendingTable& pending() {
  static PendingTable* table = new PendingTable();  // never destroyed
  return *table;
}

}  // namespace strata::interposer
