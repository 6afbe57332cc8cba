// The per-rank flight recorder: a bounded ring of records. A slot is
// guarded by its sequence word, so a reader (the agent, a dump, a signal
// handler) never sees half a record and a late end never lands in a record
// that has since reused the slot. Nothing here allocates after construction.
//
// Two writer modes. Shared (MPI_THREAD_MULTIPLE: threads call at once):
// a writer claims the next index with a fetch_add and holds a slot with a
// compare-and-swap of its sequence word. Single (any lower thread level:
// one thread calls at a time, and MPI requires the application to order
// them): plain stores behind the sequence word, no read-modify-write at
// all, which is most of a record's cost on CPUs where a locked instruction
// takes 10-20 ns. Readers never write, in either mode.
#pragma once

#include "fault/recorder/record.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace strata::fault {

// What a writer knows at entry.
struct RecordStart {
  OpKind kind = OpKind::none;
  uint32_t comm = kNoComm;
  int32_t peer = kNoPeer;
  int32_t peer2 = kNoPeer;
  int32_t tag = 0;
  uint64_t seq = 0;
  uint64_t seq2 = 0;
  uint64_t bytes = 0;
  int64_t enq_ns = 0;
  int64_t compute_ns = 0;
  bool started = true;  // blocking: start_ns = enq_ns
};

class Ring {
 public:
  // `capacity` is rounded up to a power of two (at least 16).
  explicit Ring(size_t capacity, bool shared_writers = true);
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // Publishes a new active record; returns its index.
  uint64_t begin(const RecordStart& start);
  // Marks record `index` ended (if it is still in the ring).
  void finish(uint64_t index, int64_t end_ns, OpState state = OpState::done);
  // A non-blocking call returned with its request pending.
  void mark_posted(uint64_t index);
  // Sets start_ns of a non-blocking record that has none yet.
  void mark_started(uint64_t index, int64_t start_ns);

  // Copies record `index`; false when it was overwritten, not yet written,
  // or being written. Async-signal-safe.
  bool read(uint64_t index, Record* out) const;

  // One past the last index handed out.
  uint64_t head() const { return head_.load(std::memory_order_acquire); }
  size_t capacity() const { return mask_ + 1; }
  bool shared_writers() const { return shared_; }
  // The oldest index that may still be in the ring.
  uint64_t tail() const {
    const uint64_t h = head();
    return h > capacity() ? h - capacity() : 0;
  }

 private:
  Slot& slot(uint64_t index) const { return slots_[index & mask_]; }
  // Holds the slot of record `index` for an update and returns the
  // sequence word to release it with; 0 when the slot holds another record.
  uint64_t hold(uint64_t index, Slot& s) const;
  // Holds the slot for a new record (begin); returns the word to release with.
  uint64_t claim(Slot& s) const;

  std::unique_ptr<Slot[]> slots_;
  size_t mask_;
  bool shared_;
  std::atomic<uint64_t> head_{0};
};

}  // namespace strata::fault
