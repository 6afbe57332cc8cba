// The scope objects' slow paths: only reached when the recorder or an
// injected fault is active.
#include "fault/hooks.hpp"

#include "fault/clock.hpp"
#include "fault/inject/inject.hpp"
#include "fault/recorder/state.hpp"
#include "mpi/real_mpi.hpp"

#include <vector>

namespace strata::fault {
namespace {

// Scopes do not nest within a thread (see hooks.hpp).
STRATA_FAULT_TLS thread_local int t_depth = 0;
// When this thread's last recorded call returned, and the time it spent
// outside recorded calls since its last collective (ticks, clock.hpp).
STRATA_FAULT_TLS thread_local int64_t t_last_end_ns = 0;
STRATA_FAULT_TLS thread_local int64_t t_compute_ns = 0;
// Collectives on a stream this thread has recorded since the last one it
// had timed on the device, and when that was (ticks).
STRATA_FAULT_TLS thread_local uint64_t t_stream_calls = ~uint64_t{0} >> 1;
STRATA_FAULT_TLS thread_local uint64_t t_last_timed = 0;

// Whether this collective on a stream, entering at `enq`, is timed.
bool device_sample(const ProcessState& p, uint64_t enq) {
  const uint64_t every = p.device_every.load(std::memory_order_relaxed);
  if (every == 0 || ++t_stream_calls < every) return false;
  if (t_last_timed != 0 && enq - t_last_timed < p.device_period_ticks.load(std::memory_order_relaxed)) return false;
  t_stream_calls = 0;
  t_last_timed = enq;
  return true;
}

// The gap before a call that starts at `enq_ns`; collectives take (and
// reset) the whole time since the previous collective.
int64_t compute_before(int64_t enq_ns, bool collective) {
  const int64_t gap = t_last_end_ns > 0 && enq_ns > t_last_end_ns ? enq_ns - t_last_end_ns : 0;
  if (!collective) {
    t_compute_ns += gap;
    return gap;
  }
  const int64_t total = t_compute_ns + gap;
  t_compute_ns = 0;
  return total;
}

// The followed requests of the completion call in progress on this thread.
struct Followed {
  int position;
  MPI_Request handle;
};
STRATA_FAULT_TLS thread_local std::vector<Followed> t_followed;

uint64_t next_ordinal(std::atomic<uint64_t>* counters, int32_t peer, int size) {
  if (counters == nullptr || peer < 0 || peer >= size) return 0;
  return counters[peer].fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

uint64_t CollScope::bytes_of(int count, MPI_Datatype type) noexcept {
  if (!hooks::on() || count <= 0) return 0;
  int size = 0;
  return mpi::real().MPI_Type_size(type, &size) == MPI_SUCCESS && size > 0 ? static_cast<uint64_t>(size) * count : 0;
}

void P2pScope::begin(OpKind kind, MPI_Comm comm, int count, MPI_Datatype type, int peer, int tag, MPI_Request* request,
                     int peer2) noexcept {
  if (t_depth++ != 0) {
    entered_ = true;  // only to undo the depth
    return;
  }
  entered_ = true;
  ProcessState& p = process();
  if (inject::any()) inject::before(kind);
  const uint32_t c = p.comms.index_of(comm);
  const int32_t world_peer = p.comms.world_peer(c, peer);
  if (p.ring) {
    RecordStart r;
    r.kind = kind;
    r.comm = c;
    r.peer = world_peer;
    r.tag = tag;
    const bool sends = is_send_side(kind);
    r.seq = next_ordinal(sends ? p.sent_to.get() : p.received_from.get(), world_peer, p.size);
    if (kind == OpKind::sendrecv) {
      r.peer2 = p.comms.world_peer(c, peer2);
      r.seq2 = next_ordinal(p.received_from.get(), r.peer2, p.size);
    }
    int size = 0;
    if (count > 0 && mpi::real().MPI_Type_size(type, &size) == MPI_SUCCESS && size > 0)
      r.bytes = static_cast<uint64_t>(size) * count;
    r.enq_ns = static_cast<int64_t>(now_ticks());
    r.compute_ns = compute_before(r.enq_ns, false);
    index_ = p.ring->begin(r);
    request_ = request;
    recorded_ = true;
  }
  if (inject::any()) inject::inside(kind, world_peer);
}

void P2pScope::end() noexcept {
  --t_depth;
  if (!recorded_) return;
  ProcessState& p = process();
  const int64_t t = static_cast<int64_t>(now_ticks());
  t_last_end_ns = t;
  if (request_ == nullptr) {
    p.ring->finish(index_, t);
  } else if (*request_ == MPI_REQUEST_NULL || !p.requests.put(*request_, index_)) {
    p.ring->finish(index_, t, *request_ == MPI_REQUEST_NULL ? OpState::done : OpState::lost);
  } else {
    p.ring->mark_posted(index_);
  }
}

void CollScope::begin(OpKind kind, MPI_Comm comm, uint64_t bytes, int root, void* stream) noexcept {
  entered_ = true;
  if (t_depth++ != 0) return;
  ProcessState& p = process();
  if (inject::any()) inject::before(kind);
  comm_ = p.comms.index_of(comm);
  CommEntry* e = p.comms.entry(comm_);
  if (e != nullptr) {
    // MPI orders the collectives of one communicator (two threads may not
    // run them at once), so no read-modify-write is needed.
    seq_ = e->coll_started.load(std::memory_order_relaxed) + 1;
    e->coll_started.store(seq_, std::memory_order_relaxed);
  }
  // Stream-ordered and not among the numbers recorded at this rate: counted
  // above (the communicator's progress), not recorded. Its time counts as
  // the gap before the next recorded call (t_last_end_ns is not moved).
  const bool thinned = stream != nullptr && (seq_ & (p.stream_stride.load(std::memory_order_relaxed) - 1)) != 0;
  if (p.ring && !thinned) {
    RecordStart r;
    r.kind = kind;
    r.comm = comm_;
    r.peer = root >= 0 ? p.comms.world_peer(comm_, root) : kNoPeer;
    r.seq = seq_;
    r.bytes = bytes;
    r.enq_ns = static_cast<int64_t>(now_ticks());
    r.compute_ns = compute_before(r.enq_ns, true);
    index_ = p.ring->begin(r);
    recorded_ = true;
    if (stream != nullptr && device_sample(p, static_cast<uint64_t>(r.enq_ns))) {
      if (const DeviceTimer* timer = p.device_timer.load(std::memory_order_acquire); timer && timer->mark) {
        stream_ = stream;
        device_begin_ = timer->mark(stream, timer->user);
      }
    }
  }
  if (inject::any()) inject::inside(kind, kNoPeer);
}

void CollScope::end() noexcept {
  if (--t_depth != 0) return;
  ProcessState& p = process();
  if (CommEntry* e = p.comms.entry(comm_); e != nullptr && seq_ != 0) {
    e->coll_left.store(seq_, std::memory_order_relaxed);
  }
  if (!recorded_) return;
  if (device_begin_ != nullptr) {
    const DeviceTimer* timer = p.device_timer.load(std::memory_order_acquire);
    void* device_end = timer && timer->mark ? timer->mark(stream_, timer->user) : nullptr;
    // The watchdog resolves the marks (or, with null, releases them).
    if (!p.device_marks.push({index_, device_begin_, device_end}) && timer && timer->elapsed) {
      int64_t unused = 0;
      timer->elapsed(device_begin_, nullptr, &unused, timer->user);
      timer->elapsed(device_end, nullptr, &unused, timer->user);
    }
  }
  t_last_end_ns = static_cast<int64_t>(now_ticks());
  p.ring->finish(index_, t_last_end_ns);
}

void WaitScope::begin(bool blocking, int count, MPI_Request* requests) noexcept {
  entered_ = true;
  if (t_depth++ != 0 || requests == nullptr || count <= 0) return;
  ProcessState& p = process();
  if (!p.ring) return;
  const int64_t t = static_cast<int64_t>(now_ticks());
  int32_t first_peer = kNoPeer;
  OpKind first_kind = OpKind::none;
  if (!p.requests.empty()) {
    try {
      std::vector<Followed>& followed = t_followed;
      followed.clear();
      for (int i = 0; i < count; ++i) {
        uint64_t record = 0;
        if (requests[i] == MPI_REQUEST_NULL || !p.requests.find(requests[i], &record)) continue;
        followed.push_back({i, requests[i]});
        if (!blocking) continue;
        p.ring->mark_started(record, t);
        Record r;
        if (first_kind == OpKind::none && p.ring->read(record, &r)) {
          first_peer = r.peer;
          first_kind = r.kind;
        }
      }
      if (!followed.empty()) requests_ = requests;
    } catch (...) {  // out of memory: these requests' records stay active
      requests_ = nullptr;
    }
  }
  if (blocking) {
    RecordStart r;
    r.kind = OpKind::wait;
    r.peer = first_peer;
    r.peer2 = static_cast<int32_t>(first_kind);  // wait records: the kind of the first followed request
    r.bytes = static_cast<uint64_t>(count);      // wait records: how many requests
    r.enq_ns = t;
    r.compute_ns = compute_before(t, false);
    index_ = p.ring->begin(r);
    recorded_ = true;
  }
}

void WaitScope::end() noexcept {
  if (--t_depth != 0) return;
  ProcessState& p = process();
  const int64_t t = static_cast<int64_t>(now_ticks());
  if (requests_ != nullptr) {
    for (const Followed& f : t_followed) {
      if (requests_[f.position] != MPI_REQUEST_NULL) continue;  // still active
      uint64_t record = 0;
      if (p.requests.take(f.handle, &record)) p.ring->finish(record, t);
    }
  }
  if (recorded_) {
    t_last_end_ns = t;
    p.ring->finish(index_, t);
  }
}

}  // namespace strata::fault
