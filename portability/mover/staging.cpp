// The staging pools and their buffers (staging.hpp).
#include "portability/mover/staging.hpp"

#include "base/config.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/counters.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace strata::mover {
namespace {

config::IntParam g_host_pool_bytes{"STRATA_HOST_POOL_BYTES",
                                   int64_t{256} << 20,
                                   "Most bytes of host staging buffers kept for reuse",
                                   0,
                                   INT64_MAX,
                                   true};
config::IntParam g_pinned_pool_bytes{"STRATA_PINNED_POOL_BYTES",
                                     int64_t{512} << 20,
                                     "Most bytes of pinned (page-locked, mapped) staging buffers kept for reuse",
                                     0,
                                     INT64_MAX,
                                     true};
config::IntParam g_device_pool_bytes{"STRATA_DEVICE_POOL_BYTES",
                                     int64_t{1} << 30,
                                     "Most bytes of device staging buffers kept for reuse, per device",
                                     0,
                                     INT64_MAX,
                                     true};

constexpr int kMinClass = 12;  // 4 KiB
constexpr int kClasses = 48;

int size_class(int64_t bytes) {
  int c = kMinClass;
  while (c < kClasses - 1 && (int64_t{1} << c) < bytes) ++c;
  return c;
}

}  // namespace

// A buffer of a pool: its host (or device) address and the address
// kernels use.
struct PoolBuffer {
  char* data;
  char* device_view;
};

// One kind of memory: how to get and return it, and the cached free lists.
class StagingPool {
 public:
  using Buffer = PoolBuffer;
  using Allocate = bool (*)(int device, size_t bytes, Buffer* out);
  using Free = void (*)(int device, Buffer buffer);

  StagingPool(Allocate allocate, Free free, const config::IntParam& limit, int device)
      : allocate_(allocate), free_(free), limit_(limit), device_(device) {}

  Buffer get(int cls) {
    if (Buffer kept = take_kept(cls); kept.data != nullptr) return kept;
    Buffer b = allocate_new(cls);
    if (b.data != nullptr) {
      std::lock_guard<std::mutex> lock(mutex_);
      out_bytes_ += int64_t{1} << cls;
    }
    return b;
  }

  // A kept buffer of the class (the one returned last), or none: never
  // allocates.
  Buffer take_kept(int cls) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_lists_[cls].empty()) return Buffer{nullptr, nullptr};
    Buffer b = free_lists_[cls].back().buffer;
    free_lists_[cls].pop_back();
    cached_bytes_ -= int64_t{1} << cls;
    out_bytes_ += int64_t{1} << cls;
    return b;
  }

  // Allocates one buffer of the class for the free list where the limit has
  // room for it once every buffer handed out has come back (checked again
  // after the allocation, made unlocked). Counting only the kept ones, a
  // window of more large messages than the limit holds (osu_bw's 64 of 16
  // MiB, with pinned staging: 1 GiB against 512 MiB) stocked a buffer for
  // each message it staged unpinned, and the window's return evicted as
  // many: a cudaHostAlloc and a cudaFreeHost of 16 MiB a message.
  void stock(int cls) {
    const int64_t bytes = int64_t{1} << cls;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_bytes_ + out_bytes_ + bytes > limit_.get()) return;
    }
    if (Buffer b = allocate_new(cls); b.data != nullptr) keep(cls, b);
  }

  // A buffer handed out comes back: kept, or freed (keep).
  void put(int cls, Buffer b) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      out_bytes_ = std::max<int64_t>(0, out_bytes_ - (int64_t{1} << cls));
    }
    keep(cls, b);
  }

  // Keeps a returned buffer. Where the kept bytes would pass the limit, the
  // buffers returned longest ago go first, whatever their class: a program
  // whose messages grew keeps its new working set, where freeing the
  // returned buffer instead freed and allocated buffers of the new size at
  // every step (a window of 16 vectors of 64 MiB after one of 16 MiB: 4 of
  // its 16 device buffers, each a cudaFree, a cudaMalloc and a new IPC
  // mapping on the receiver, 142-193 GB/s on 2 x H200 against 292-304 GB/s
  // without the smaller point first). The frees happen outside the lock.
  void keep(int cls, Buffer b) {
    const int64_t bytes = int64_t{1} << cls;
    while (bytes <= limit_.get()) {
      Buffer evicted[kEvictBatch];
      int n = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (cached_bytes_ + bytes <= limit_.get()) {
          try {
            free_lists_[cls].push_back(Kept{b, ++clock_});
            cached_bytes_ += bytes;
            return;
          } catch (...) {  // no room to remember it: free it below
            break;
          }
        }
        while (n < kEvictBatch && cached_bytes_ + bytes > limit_.get()) {
          const int oldest = oldest_class();
          if (oldest < 0) break;
          evicted[n++] = free_lists_[oldest].front().buffer;
          free_lists_[oldest].pop_front();
          cached_bytes_ -= int64_t{1} << oldest;
        }
      }
      if (n == 0) break;
      for (int i = 0; i < n; ++i) free_(device_, evicted[i]);
      counters().staging_evicted.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    }
    free_(device_, b);
  }

  void trim() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& list : free_lists_) {
      for (const Kept& k : list) free_(device_, k.buffer);
      list.clear();
    }
    cached_bytes_ = 0;
  }

 private:
  // A new buffer of the class (none where the allocation failed), counted.
  Buffer allocate_new(int cls) {
    Buffer b{nullptr, nullptr};
    if (!allocate_(device_, static_cast<size_t>(int64_t{1} << cls), &b)) return Buffer{nullptr, nullptr};
    counters().staging_allocated.fetch_add(1, std::memory_order_relaxed);
    return b;
  }

  // A kept buffer and when it came back (the pool's count of returns).
  struct Kept {
    Buffer buffer;
    uint64_t returned;
  };
  static constexpr int kEvictBatch = 16;  // buffers freed per pass, outside the lock

  // The class whose oldest kept buffer came back first, or -1 (none kept).
  int oldest_class() const {
    int oldest = -1;
    for (int c = 0; c < kClasses; ++c) {
      if (!free_lists_[c].empty() &&
          (oldest < 0 || free_lists_[c].front().returned < free_lists_[oldest].front().returned)) {
        oldest = c;
      }
    }
    return oldest;
  }

  Allocate allocate_;
  Free free_;
  const config::IntParam& limit_;
  int device_;
  std::mutex mutex_;
  std::deque<Kept> free_lists_[kClasses];  // oldest first
  int64_t cached_bytes_ = 0;
  int64_t out_bytes_ = 0;  // handed out, not yet back
  uint64_t clock_ = 0;
};

namespace {

bool allocate_host(int, size_t bytes, StagingPool::Buffer* out) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes) != 0) return false;
  *out = {static_cast<char*>(p), nullptr};
  return true;
}
void free_host(int, StagingPool::Buffer b) { std::free(b.data); }

bool allocate_pinned(int, size_t bytes, StagingPool::Buffer* out) {
  void* p = nullptr;
  void* d = nullptr;
  if (gpu::malloc_pinned(&p, bytes, /*mapped=*/true) != Status::ok) return false;
  counters().pinned_allocated.fetch_add(1, std::memory_order_relaxed);
  if (gpu::mapped_device_pointer(p, &d) != Status::ok) {
    gpu::free_pinned(p);
    return false;
  }
  *out = {static_cast<char*>(p), static_cast<char*>(d)};
  return true;
}
void free_pinned(int, StagingPool::Buffer b) { gpu::free_pinned(b.data); }

// Allocates on `device`, leaving the caller's current device as it was.
bool allocate_device(int device, size_t bytes, StagingPool::Buffer* out) {
  int current = 0;
  if (gpu::get_device(&current) != Status::ok) return false;
  if (current != device && gpu::set_device(device) != Status::ok) return false;
  void* p = nullptr;
  const bool ok = gpu::malloc_device(&p, bytes) == Status::ok;
  if (current != device) gpu::set_device(current);
  if (!ok) return false;
  *out = {static_cast<char*>(p), static_cast<char*>(p)};
  return true;
}
void free_device(int, StagingPool::Buffer b) { gpu::free_device(b.data); }

std::mutex g_device_pools_mutex;
std::map<int, std::unique_ptr<StagingPool>>& device_pools() {
  static auto* pools = new std::map<int, std::unique_ptr<StagingPool>>();  // never destroyed
  return *pools;
}

}  // namespace

StagingPool& host_pool() {
  static auto* pool = new StagingPool(allocate_host, free_host, g_host_pool_bytes, -1);  // never destroyed
  return *pool;
}

StagingPool& pinned_pool() {
  static auto* pool = new StagingPool(allocate_pinned, free_pinned, g_pinned_pool_bytes, -1);
  return *pool;
}

StagingPool& device_pool(int device) {
  std::lock_guard<std::mutex> lock(g_device_pools_mutex);
  auto& pools = device_pools();
  auto it = pools.find(device);
  if (it == pools.end()) {
    it = pools.emplace(device, std::make_unique<StagingPool>(allocate_device, free_device, g_device_pool_bytes, device))
             .first;
  }
  return *it->second;
}

Staging Staging::acquire(StagingPool& pool, int64_t bytes) {
  const int cls = size_class(bytes < 1 ? 1 : bytes);
  return adopt(pool, cls, pool.get(cls));
}

Staging Staging::pinned_if_kept(int64_t bytes) {
  const int cls = size_class(bytes < 1 ? 1 : bytes);
  if (gpu::available()) {
    Staging s = adopt(pinned_pool(), cls, pinned_pool().take_kept(cls));
    if (s) return s;
  }
  return host(bytes);
}

void Staging::keep_pinned(int64_t bytes) {
  if (gpu::available()) pinned_pool().stock(size_class(bytes < 1 ? 1 : bytes));
}

bool Staging::pinned() const { return data_ != nullptr && pool_ == &pinned_pool(); }

Staging Staging::adopt(StagingPool& pool, int cls, const PoolBuffer& b) {
  Staging s;
  if (b.data == nullptr) return s;
  counters().staging_acquired.fetch_add(1, std::memory_order_relaxed);
  s.data_ = b.data;
  s.device_view_ = b.device_view;
  s.size_class_ = cls;
  s.pool_ = &pool;
  return s;
}

Staging Staging::pinned_or_host(int64_t bytes) {
  if (gpu::available()) {
    Staging s = acquire(pinned_pool(), bytes);
    if (s) return s;
  }
  return host(bytes);
}

void Staging::give_back() {
  if (pool_ != nullptr) pool_->put(size_class_, StagingPool::Buffer{data_, device_view_});
  data_ = nullptr;
}

void trim_staging() {
  host_pool().trim();
  pinned_pool().trim();
  std::lock_guard<std::mutex> lock(g_device_pools_mutex);
  for (auto& [device, pool] : device_pools()) pool->trim();
}

}  // namespace strata::mover
