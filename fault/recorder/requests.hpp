// Non-blocking requests the recorder follows: request handle -> the index
// of its record, so that the completion call that finishes a request ends
// its record. A fixed open-addressing table under a mutex (only isend,
// irecv and completion calls touch it); when it is full a request is not
// followed and its record is marked `lost` at once.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <mutex>

namespace strata::fault {

class RequestTable {
 public:
  static constexpr size_t kCapacity = 4096;  // a power of two

  bool put(MPI_Request request, uint64_t record);
  // Removes and returns the record of `request`; false when not followed.
  bool take(MPI_Request request, uint64_t* record);
  // The record of `request` without removing it.
  bool find(MPI_Request request, uint64_t* record);
  bool empty() const { return size_.load(std::memory_order_relaxed) == 0; }
  // Up to `max` followed records (the agent reports the oldest pending).
  size_t snapshot(uint64_t* records, size_t max);

  // The handle as a number: a pointer in Open MPI, an int in MPICH.
  static uint64_t key_of(MPI_Request request) { return bits_of(request); }

 private:
  template <class Handle>
  static uint64_t bits_of(Handle h) {
    if constexpr (std::is_pointer<Handle>::value) {
      return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
    } else {
      return static_cast<uint64_t>(static_cast<uint32_t>(h));
    }
  }

  struct Entry {
    uint64_t key;  // 0: empty
    uint64_t record;
    bool tombstone;
  };
  size_t probe(uint64_t key) const;

  Entry entries_[kCapacity] = {};
  std::atomic<size_t> size_{0};
  size_t used_ = 0;  // live + tombstones
  std::mutex mutex_;
};

}  // namespace strata::fault
