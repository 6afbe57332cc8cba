#include "fault/agent/scanner.hpp"

#include "fault/recorder/state.hpp"

#include <algorithm>

namespace strata::fault {
namespace {

constexpr size_t kMaxColls = 8192;  // samples per heartbeat; more are dropped (and counted)
constexpr size_t kMaxP2p = 16384;
constexpr size_t kMaxPending = 4;
// Above this many samples in a tick, only every S-th collective (by its
// number) and message (by its ordinal) is sent, S the smallest power of two
// that brings the count under the budget. Powers of two make the ranks
// agree: a number every rank keeps is a multiple of the largest S any of
// them chose, so those collectives and messages are complete at the
// coordinator whatever each rank's S.
constexpr size_t kCollBudget = 512;
constexpr size_t kP2pBudget = 1024;

// The smallest power of two S with count / S within `budget`.
uint64_t stride_within(uint64_t count, size_t budget) {
  uint64_t stride = 1;
  while (count / stride > budget) stride <<= 1;
  return stride;
}

template <class T, class Key>
void thin(std::vector<T>& samples, size_t budget, Key key) {
  if (samples.size() <= budget) return;
  const uint64_t stride = stride_within(samples.size(), budget);
  samples.erase(std::remove_if(samples.begin(), samples.end(), [&](const T& s) { return key(s) % stride != 0; }),
                samples.end());
}

}  // namespace

oob::OpBrief Scanner::brief(const ProcessState& p, const Record& r) const {
  oob::OpBrief b;
  b.kind = static_cast<uint8_t>(r.kind);
  b.state = static_cast<uint8_t>(r.state);
  const CommEntry* e = r.comm == kNoComm ? nullptr : p.comms.entry(r.comm);
  b.comm = e != nullptr ? e->id : 0;
  b.seq = r.seq;
  b.peer = r.peer;
  b.peer2 = r.peer2;
  b.bytes = r.bytes;
  b.enq_ns = r.enq_ns;
  b.end_ns = r.end_ns;
  return b;
}

int64_t Scanner::threshold_ns(const Record& r) const {
  const double typical = typical_.typical_ns(r.kind, r.bytes);
  const double scaled = typical > 0 ? settings_.hang_factor * typical : 0;
  return std::max(settings_.hang_floor_ns, static_cast<int64_t>(scaled));
}

void Scanner::finished(ProcessState& p, const Record& r, oob::Heartbeat* out) {
  ++ops_done_;
  if (!has_last_ || r.end_ns >= last_.end_ns) {
    last_ = r;
    has_last_ = true;
  }
  if (r.state != OpState::done) return;
  if (!is_nonblocking(r.kind)) typical_.add(r.kind, r.bytes, std::max<int64_t>(0, r.end_ns - r.enq_ns));
  if (is_collective(r.kind)) {
    if (r.comm == kNoComm || r.seq == 0) return;
    if (out->colls.size() >= kMaxColls) {
      ++dropped_;
      return;
    }
    oob::CollSample s;
    s.comm = p.comms.entry(r.comm)->id;
    s.seq = r.seq;
    s.bytes = r.bytes;
    s.start_ns = r.enq_ns;
    s.end_ns = r.end_ns;
    s.compute_ns = r.compute_ns;
    s.kind = static_cast<uint8_t>(r.kind);
    out->colls.push_back(s);
    return;
  }
  auto half = [&](int32_t peer, uint8_t role, uint64_t ordinal, int64_t ready) {
    if (peer < 0 || ordinal == 0) return;
    if (out->p2p.size() >= kMaxP2p) {
      ++dropped_;
      return;
    }
    oob::P2pSample s;
    s.peer = peer;
    s.role = role;
    s.ordinal = ordinal;
    s.bytes = r.bytes;
    s.ready_ns = ready;
    s.end_ns = r.end_ns;
    out->p2p.push_back(s);
  };
  switch (r.kind) {
    case OpKind::send:
    case OpKind::isend: half(r.peer, 0, r.seq, r.enq_ns); break;
    case OpKind::recv:
    case OpKind::irecv: half(r.peer, 1, r.seq, std::max(r.enq_ns, r.start_ns)); break;
    case OpKind::sendrecv:
      half(r.peer, 0, r.seq, r.enq_ns);
      half(r.peer2, 1, r.seq2, r.enq_ns);
      break;
    default: break;
  }
}

uint64_t Scanner::stream_stride(uint64_t collectives) { return stride_within(collectives, kCollBudget); }

void Scanner::resolve_device(ProcessState& p) {
  const DeviceTimer* timer = p.device_timer.load(std::memory_order_acquire);
  p.device_marks.drain(&marks_);
  if (timer == nullptr || timer->elapsed == nullptr) return;  // kept until a timer is back
  size_t keep = 0;
  for (const PendingMarks& m : marks_) {
    int64_t ns = -1;
    const int rc = timer->elapsed(m.begin, m.end, &ns, timer->user);
    if (rc == 0) {
      marks_[keep++] = m;
    } else if (rc == 1) {
      p.device_times.set(m.index, ns);
    }
  }
  marks_.resize(keep);
}

void Scanner::scan(ProcessState& p, int64_t now_ns, oob::Heartbeat* out) {
  Ring& ring = *p.ring;
  const uint64_t head = ring.head();
  if (head - next_ > ring.capacity()) next_ = head - ring.capacity();  // lost to wrap-around
  // Records still active at the last tick.
  size_t keep = 0;
  for (uint64_t index : active_) {
    Record r;
    if (!ring.read(index, &r)) continue;  // overwritten
    r = in_ns(r);
    if (r.state == OpState::active || r.state == OpState::posted) {
      active_[keep++] = index;
    } else {
      finished(p, r, out);
    }
  }
  active_.resize(keep);
  // New records.
  for (; next_ < head; ++next_) {
    Record r;
    if (!ring.read(next_, &r)) {
      if (next_ >= ring.tail()) break;  // being written: next tick
      continue;
    }
    r = in_ns(r);
    if (r.state == OpState::active || r.state == OpState::posted) {
      active_.push_back(next_);
    } else {
      finished(p, r, out);
    }
  }
  resolve_device(p);
  thin(out->colls, kCollBudget, [](const oob::CollSample& s) { return s.seq; });
  thin(out->p2p, kP2pBudget, [](const oob::P2pSample& s) { return s.ordinal; });

  // The state: the oldest blocking operation in progress, the oldest pending.
  out->flags = 0;
  out->ops_done = ops_done_;
  out->pending.clear();
  bool have_current = false;
  Record current;
  std::vector<Record> pending;
  for (uint64_t index : active_) {
    Record r;
    if (!ring.read(index, &r)) continue;
    r = in_ns(r);
    if (r.state == OpState::posted) {
      pending.push_back(r);
    } else if (r.state == OpState::active && (!have_current || r.enq_ns < current.enq_ns)) {
      current = r;
      have_current = true;
    }
  }
  if (have_current) {
    out->flags |= oob::Heartbeat::kInOp;
    out->current = brief(p, current);
    out->threshold_ns = threshold_ns(current);
    if (now_ns - current.enq_ns > out->threshold_ns) out->flags |= oob::Heartbeat::kSuspect;
  }
  if (has_last_) {
    out->flags |= oob::Heartbeat::kHasLast;
    out->last = brief(p, last_);
  }
  std::sort(pending.begin(), pending.end(), [](const Record& a, const Record& b) { return a.enq_ns < b.enq_ns; });
  for (size_t i = 0; i < pending.size() && i < kMaxPending; ++i) out->pending.push_back(brief(p, pending[i]));
}

}  // namespace strata::fault
