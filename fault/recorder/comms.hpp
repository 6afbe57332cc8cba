// The communicators the recorder has seen, by a small per-rank index (what
// a record stores) and by an id meant to be the same on every member, so
// that "allreduce #12 on comm 5f3a..." names one collective across ranks.
//
// MPI_COMM_WORLD is index 0 and id 0. Another communicator's id is a hash
// of its members' world ranks plus the number of communicators with the
// same members this rank registered before it (dups): equal on every
// member when the members first use their duplicates in the same order,
// which collective creation makes the common case (docs/fault.md).
// The index is cached on the communicator as an attribute; the table never
// shrinks (records keep pointing at freed communicators' entries) and holds
// kMaxComms entries, after which new communicators are recorded with
// kNoComm and no sequence numbers.
#pragma once

#include "fault/recorder/record.hpp"

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace strata::fault {

struct CommEntry {
  uint64_t id = 0;
  int32_t size = 0;
  int32_t my_rank = 0;
  int32_t* world_ranks = nullptr;         // size entries; null for MPI_COMM_WORLD (the identity)
  std::atomic<uint64_t> coll_started{0};  // the last collective number entered
  std::atomic<uint64_t> coll_left{0};     // the last collective number left
  std::atomic<bool> freed{false};

  int32_t to_world(int32_t rank) const { return world_ranks == nullptr ? rank : world_ranks[rank]; }
};

class CommTable {
 public:
  static constexpr uint32_t kMaxComms = 256;

  // Registers MPI_COMM_WORLD and the attribute key; call after MPI_Init.
  void open(int world_rank, int world_size);
  // The entry index of `comm` (registering it on first sight), or kNoComm.
  uint32_t index_of(MPI_Comm comm);
  // World rank of `rank` in `comm`'s entry, or the kNoPeer/kAnyPeer/kNullPeer marks.
  int32_t world_peer(uint32_t index, int rank) const;

  CommEntry* entry(uint32_t index) { return index < count() ? &entries_[index] : nullptr; }
  const CommEntry* entry(uint32_t index) const { return index < count() ? &entries_[index] : nullptr; }
  uint32_t count() const { return count_.load(std::memory_order_acquire); }

  // For the attribute's delete callback.
  void on_freed(uint32_t index);

 private:
  uint32_t register_comm(MPI_Comm comm);

  CommEntry entries_[kMaxComms];
  std::atomic<uint32_t> count_{0};
  std::atomic<uint64_t> epoch_{0};  // bumped when a communicator is freed: invalidates per-thread caches
  int keyval_ = MPI_KEYVAL_INVALID;
  std::mutex mutex_;
};

}  // namespace strata::fault
