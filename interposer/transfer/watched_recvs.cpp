#include "interposer/transfer/watched_recvs.hpp"

#include "interposer/transfer/sides.hpp"

#include <cstring>

namespace strata::interposer {

std::atomic<size_t> g_watched_recvs{0};

namespace {

constexpr uint64_t kClaimed = ~uint64_t{0};

// A handle is a pointer (Open MPI) or an integer (MPICH): its bits, plus
// one so that no handle is 0 (a free slot).
uint64_t key_of(MPI_Request request) noexcept {
  static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "request handle wider than 64 bits");
  uint64_t bits = 0;
  std::memcpy(&bits, &request, sizeof request);  // NOLINT(bugprone-sizeof-expression): the handle, not its target
  return bits + 1;
}

size_t home_of(uint64_t key) noexcept {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 40) & (WatchedRecvs::kSlots - 1);
}

}  // namespace

bool WatchedRecvs::add(MPI_Request request, const WatchedRecv& what) noexcept {
  const uint64_t key = key_of(request);
  if (key == kClaimed) return false;
  size_t i = home_of(key);
  for (int p = 0; p < kProbes; ++p, i = (i + 1) & (kSlots - 1)) {
    Slot& s = slots_[i];
    uint64_t expected = 0;
    if (s.key.load(std::memory_order_relaxed) != 0 ||
        !s.key.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
      continue;
    }
    s.what = what;
    s.key.store(key, std::memory_order_release);
    g_watched_recvs.fetch_add(1, std::memory_order_release);
    return true;
  }
  return false;
}

// Entries are deleted in place (no tombstones, no moves), so a look-up
// probes the whole neighbourhood: a free slot does not end it.
bool WatchedRecvs::take(MPI_Request request, WatchedRecv* what) noexcept {
  const uint64_t key = key_of(request);
  size_t i = home_of(key);
  for (int p = 0; p < kProbes; ++p, i = (i + 1) & (kSlots - 1)) {
    Slot& s = slots_[i];
    if (s.key.load(std::memory_order_acquire) != key) continue;
    *what = s.what;
    s.key.store(0, std::memory_order_release);
    g_watched_recvs.fetch_sub(1, std::memory_order_release);
    return true;
  }
  return false;
}

void WatchedRecvs::clear() noexcept {
  for (Slot& s : slots_) {
    uint64_t k = s.key.load(std::memory_order_acquire);
    if (k != 0 && k != kClaimed && s.key.compare_exchange_strong(k, 0)) {
      g_watched_recvs.fetch_sub(1, std::memory_order_release);
    }
  }
}

namespace {
WatchedRecvs g_table;  // namespace scope, zero-initialised: no guard on the hot path
}  // namespace

WatchedRecvs& watched_recvs() noexcept { return g_table; }

PendingOp as_pending(const WatchedRecv& w) {
  PendingOp op;
  op.kind = PendingOp::Kind::recv;
  op.comm = w.comm;
  (void)prepare_recv(Plan{}, w.buffer, w.count, w.type, &op.recv);  // the library's path: no staging
  return op;
}

}  // namespace strata::interposer
