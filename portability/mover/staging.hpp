// Pooled staging buffers: host, pinned (page-locked, mapped into every
// device's address space) and device memory. No allocation, host
// registration or cudaMalloc on the hot path once a pool is warm: buffers
// come in power-of-two size classes and released ones are kept, up to a
// per-pool limit (STRATA_HOST_POOL_BYTES, STRATA_PINNED_POOL_BYTES,
// STRATA_DEVICE_POOL_BYTES). The one staging of the mover: the interposer,
// the collectives' host mirrors (host_mirror.hpp) and the Kokkos layer
// take their buffers here.
#pragma once

#include <strata/export.h>

#include <cstddef>
#include <cstdint>

namespace strata::mover {

class StagingPool;
struct PoolBuffer;

StagingPool& host_pool();
StagingPool& pinned_pool();
// The pool of one device's memory (allocations are made on that device).
StagingPool& device_pool(int device);

// Exported (STRATA_API) for Strata::kokkos, a static library over
// libstrata.so when installed.
class STRATA_API Staging {
 public:
  Staging() = default;
  // An empty buffer (data() == nullptr) when the allocation failed.
  static Staging acquire(StagingPool& pool, int64_t bytes);
  static Staging host(int64_t bytes) { return acquire(host_pool(), bytes); }
  // Host memory a device copies to or from: pinned where a device runtime
  // is there (copies run at full speed and asynchronously), else, or when
  // no pinned memory is left, plain host memory.
  static Staging pinned_or_host(int64_t bytes);
  // Host memory for a large device message, without pinning on its path: a
  // pinned buffer the pool keeps, else plain host memory (only the pages
  // written are committed). Pinning a fresh 16 MiB costs milliseconds and
  // freeing it waits for the device, which a stream of large receives that
  // turn out to be device-direct descriptors (they touch a few bytes) paid
  // on every message once more were in flight than the pool keeps.
  static Staging pinned_if_kept(int64_t bytes);
  // After plain memory carried a message of `bytes`: one pinned buffer of
  // its size class for the pool, where the pool's limit has room (then it
  // is kept like a returned buffer: freed only when the pool, full, makes
  // room for newer ones, the longest kept first), so that the next message
  // of the size finds one.
  static void keep_pinned(int64_t bytes);
  // A view of memory that belongs to nobody's pool (a peer's buffer mapped
  // through IPC): released, it is only forgotten.
  static Staging borrowed(char* data, char* device_view) {
    Staging s;
    s.data_ = data;
    s.device_view_ = device_view;
    return s;
  }
  // Moves and destruction inline: an operation record holds several
  // (mostly empty) buffers and moves a few times per message; out of line
  // they were thousands of calls per halo exchange.
  Staging(Staging&& other) noexcept
      : data_(other.data_), device_view_(other.device_view_), size_class_(other.size_class_), pool_(other.pool_) {
    other.data_ = nullptr;
  }
  Staging& operator=(Staging&& other) noexcept {
    if (this != &other) {
      release();
      data_ = other.data_;
      device_view_ = other.device_view_;
      size_class_ = other.size_class_;
      pool_ = other.pool_;
      other.data_ = nullptr;
    }
    return *this;
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  ~Staging() { release(); }

  // The address the host uses (host and pinned memory), or the device
  // address (device memory).
  char* data() const { return data_; }
  // The address kernels use: the device address of mapped pinned memory,
  // the buffer itself for device memory, null for plain host memory.
  char* device_view() const { return device_view_; }
  explicit operator bool() const { return data_ != nullptr; }
  // Pinned (page-locked, mapped) memory of the pinned pool.
  bool pinned() const;
  // Gives up ownership without freeing (for a buffer MPI may still touch).
  void leak() { data_ = nullptr; }

 private:
  // The pool's buffer `b` of size class `cls` (empty when b is none).
  static Staging adopt(StagingPool& pool, int cls, const PoolBuffer& b);
  void release() {
    if (data_ != nullptr) give_back();
  }
  void give_back();  // to the pool it came from (none: only forgotten)
  char* data_ = nullptr;
  char* device_view_ = nullptr;
  int size_class_ = -1;
  StagingPool* pool_ = nullptr;
};

// Frees every cached buffer of every pool (MPI_Finalize, tests).
void trim_staging();

}  // namespace strata::mover
