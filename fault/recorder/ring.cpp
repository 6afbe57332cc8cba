#include "fault/recorder/ring.hpp"

#include "fault/clock.hpp"

namespace strata::fault {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

}  // namespace

Record in_ns(Record r) {
  r.enq_ns = ticks_to_ns(r.enq_ns);
  r.start_ns = ticks_to_ns(r.start_ns);
  r.end_ns = ticks_to_ns(r.end_ns);
  r.compute_ns = tick_span_ns(r.compute_ns);
  return r;
}

const char* to_string(OpState state) {
  switch (state) {
    case OpState::active: return "active";
    case OpState::done: return "done";
    case OpState::lost: return "lost";
    case OpState::posted: return "posted";
  }
  return "?";
}

Ring::Ring(size_t capacity, bool shared_writers) : shared_(shared_writers) {
  size_t c = 16;
  while (c < capacity) c <<= 1;
  slots_ = std::make_unique<Slot[]>(c);
  mask_ = c - 1;
}

// A writer's hold on a slot is an odd sequence word; the release fence
// orders it before the data stores, so a reader that saw any of them sees
// the word changed (the seqlock writer's protocol). The word to release with
// is the held one plus one: never a value seen before.
uint64_t Ring::claim(Slot& s) const {
  uint64_t g = s.gen.load(kRelaxed);
  if (!shared_) {
    s.gen.store(g + 1, kRelaxed);
    std::atomic_thread_fence(std::memory_order_release);
    return g + 2;
  }
  // An updater of the record the slot held may still be inside.
  for (;;) {
    if ((g & 1) == 0 && s.gen.compare_exchange_weak(g, g + 1, std::memory_order_acquire, kRelaxed)) return g + 2;
    if (g & 1) g = s.gen.load(kRelaxed);
  }
}

uint64_t Ring::hold(uint64_t index, Slot& s) const {
  if (!shared_) {
    if (s.index.load(kRelaxed) != index) return 0;  // overwritten
    return claim(s);
  }
  for (;;) {
    uint64_t g = s.gen.load(std::memory_order_acquire);
    if (g & 1) continue;  // a writer is inside
    // Read under `g`: if the compare-and-swap below succeeds, no write came
    // in between, so the slot still holds what this read saw.
    if (s.index.load(kRelaxed) != index) return 0;
    if (s.gen.compare_exchange_weak(g, g + 1, std::memory_order_acquire, kRelaxed)) return g + 2;
  }
}

uint64_t Ring::begin(const RecordStart& r) {
  // Single writer: the index is handed out (head moves) only once the
  // record is published, so a reader never waits on a slot in progress.
  const uint64_t index = shared_ ? head_.fetch_add(1, std::memory_order_acq_rel) : head_.load(kRelaxed);
  Slot& s = slot(index);
  const uint64_t release = claim(s);
  s.index.store(index, kRelaxed);
  s.kind.store(static_cast<uint8_t>(r.kind), kRelaxed);
  s.state.store(static_cast<uint8_t>(OpState::active), kRelaxed);
  s.comm.store(r.comm, kRelaxed);
  s.peer.store(r.peer, kRelaxed);
  s.peer2.store(r.peer2, kRelaxed);
  s.tag.store(r.tag, kRelaxed);
  s.seq.store(r.seq, kRelaxed);
  s.seq2.store(r.seq2, kRelaxed);
  s.bytes.store(r.bytes, kRelaxed);
  s.enq_ns.store(r.enq_ns, kRelaxed);
  s.start_ns.store(r.started ? r.enq_ns : 0, kRelaxed);
  s.end_ns.store(0, kRelaxed);
  s.compute_ns.store(r.compute_ns, kRelaxed);
  s.gen.store(release, std::memory_order_release);
  if (!shared_) head_.store(index + 1, std::memory_order_release);
  // The next record's slot, for writing: its lines were last written a
  // whole ring ago and may since have been read by the agent's core.
  __builtin_prefetch(&slot(index + 1), 1, 3);
  return index;
}

void Ring::finish(uint64_t index, int64_t end_ns, OpState state) {
  Slot& s = slot(index);
  const uint64_t release = hold(index, s);
  if (release == 0) return;
  s.end_ns.store(end_ns, kRelaxed);
  s.state.store(static_cast<uint8_t>(state), kRelaxed);
  s.gen.store(release, std::memory_order_release);
}

void Ring::mark_posted(uint64_t index) {
  Slot& s = slot(index);
  const uint64_t release = hold(index, s);
  if (release == 0) return;
  if (s.state.load(kRelaxed) == static_cast<uint8_t>(OpState::active)) {
    s.state.store(static_cast<uint8_t>(OpState::posted), kRelaxed);
  }
  s.gen.store(release, std::memory_order_release);
}

void Ring::mark_started(uint64_t index, int64_t start_ns) {
  Slot& s = slot(index);
  if (s.start_ns.load(kRelaxed) != 0) return;
  const uint64_t release = hold(index, s);
  if (release == 0) return;
  if (s.start_ns.load(kRelaxed) == 0) s.start_ns.store(start_ns, kRelaxed);
  s.gen.store(release, std::memory_order_release);
}

bool Ring::read(uint64_t index, Record* out) const {
  const Slot& s = slot(index);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const uint64_t g1 = s.gen.load(std::memory_order_acquire);
    if (g1 & 1) continue;  // being written: try again
    Record r;
    const uint64_t held = s.index.load(kRelaxed);
    r.index = index;
    r.kind = static_cast<OpKind>(s.kind.load(kRelaxed));
    r.state = static_cast<OpState>(s.state.load(kRelaxed));
    r.comm = s.comm.load(kRelaxed);
    r.peer = s.peer.load(kRelaxed);
    r.peer2 = s.peer2.load(kRelaxed);
    r.tag = s.tag.load(kRelaxed);
    r.seq = s.seq.load(kRelaxed);
    r.seq2 = s.seq2.load(kRelaxed);
    r.bytes = s.bytes.load(kRelaxed);
    r.enq_ns = s.enq_ns.load(kRelaxed);
    r.start_ns = s.start_ns.load(kRelaxed);
    r.end_ns = s.end_ns.load(kRelaxed);
    r.compute_ns = s.compute_ns.load(kRelaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.gen.load(kRelaxed) != g1) continue;  // written meanwhile
    if (held != index) return false;           // another record (overwritten, or not yet written)
    *out = r;
    return true;
  }
  return false;
}

}  // namespace strata::fault
