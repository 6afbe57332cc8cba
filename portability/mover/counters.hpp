// What the mover did, counted for the layers above it. The mover knows
// nothing of them: the interposer reads these into strata_preload_counters
// and its STRATA_SUMMARY (interposer/transfer/counters.hpp).
#pragma once

#include <atomic>
#include <cstdint>

namespace strata::mover {

struct Counters {
  // Strided device parts packed or unpacked by the copy engines (boxes of
  // strided 2D/3D copies, engine_choice.hpp) rather than the kernels.
  std::atomic<uint64_t> parts_by_copy_engine{0};
  // Staging buffers handed out by the pools (staging.hpp), and those of
  // them the pools had to allocate (none of the size class was kept).
  std::atomic<uint64_t> staging_acquired{0};
  std::atomic<uint64_t> staging_allocated{0};
  // Kept buffers a pool freed to make room for one returned later (its
  // limit, STRATA_*_POOL_BYTES, reached; the longest-kept go first).
  std::atomic<uint64_t> staging_evicted{0};
  // Pinned buffers allocated (cudaHostAlloc: milliseconds for megabytes).
  std::atomic<uint64_t> pinned_allocated{0};
  // Large device messages whose bytes went through plain host memory
  // because no pinned buffer was kept for them (Staging::pinned_if_kept).
  std::atomic<uint64_t> staged_unpinned{0};
  // Waits queued on a stream for another pack's IPC event record
  // (pack_order.hpp; records a stream already waited for are not counted).
  std::atomic<uint64_t> pack_waits_queued{0};
  // Contiguous device-to-device copies made by the kernels (a batch of
  // STRATA_DEVICE_KERNEL_COPIES or more, device_transfer.cpp).
  std::atomic<uint64_t> kernel_copies{0};
  // Small contiguous parts of host-bound messages moved by a flush's one
  // kernel launch instead of a copy-engine call each (device_transfer.cpp).
  std::atomic<uint64_t> contiguous_by_kernels{0};
};

// The process's counters (never reset).
Counters& counters();

}  // namespace strata::mover
