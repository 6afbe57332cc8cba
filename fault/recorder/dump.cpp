#include "fault/recorder/dump.hpp"

#include "fault/clock.hpp"
#include "fault/recorder/line_writer.hpp"
#include "fault/recorder/state.hpp"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace strata::fault {
namespace {

void write_header(LineWriter& w, const ProcessState& p, const char* reason) {
  const Ring& ring = *p.ring;
  w.begin()
      .field("type", "header")
      .field("version", 1)
      .field("job", p.job)
      .field("rank", p.rank)
      .field("size", p.size)
      .field("host", p.host)
      .field("pid", static_cast<int64_t>(getpid()))
      .field("reason", reason)
      .field("clock", "CLOCK_MONOTONIC")
      .field("clock_offset_ns", p.clock_offset_ns.load(std::memory_order_relaxed))
      .field("start_ns", p.start_ns)
      .field("dumped_ns", now_ns())
      .field("ring_capacity", static_cast<uint64_t>(ring.capacity()))
      .field("records_total", ring.head())
      .field("records_dropped", ring.tail())
      .field("inject", p.inject_text)
      .end();
}

void write_comms(LineWriter& w, const ProcessState& p) {
  const uint32_t n = p.comms.count();
  for (uint32_t i = 0; i < n; ++i) {
    const CommEntry* e = p.comms.entry(i);
    w.begin()
        .field("type", "comm")
        .field("index", static_cast<uint64_t>(i))
        .hex_field("id", e->id)
        .field("size", e->size)
        .field("rank", e->my_rank)
        .field("freed", e->freed.load(std::memory_order_relaxed))
        .field("coll_started", e->coll_started.load(std::memory_order_relaxed))
        .field("coll_left", e->coll_left.load(std::memory_order_relaxed));
    if (e->world_ranks != nullptr) {
      w.begin_array("ranks");
      for (int32_t r = 0; r < e->size; ++r) w.element(e->world_ranks[r]);
      w.end_array();
    }
    w.end();
  }
}

void write_record(LineWriter& w, const ProcessState& p, const Record& r) {
  w.begin().field("type", "op").field("i", r.index).field("kind", to_string(r.kind)).field("state", to_string(r.state));
  const CommEntry* e = r.comm == kNoComm ? nullptr : p.comms.entry(r.comm);
  if (e != nullptr) w.hex_field("comm", e->id);
  w.field("seq", r.seq);
  if (r.peer != kNoPeer) w.field("peer", r.peer);
  if (r.kind == OpKind::sendrecv && r.peer2 != kNoPeer) w.field("peer2", r.peer2).field("seq2", r.seq2);
  if (r.kind == OpKind::wait) {
    w.field("requests", r.bytes);
    if (r.peer2 > 0) w.field("first_request", to_string(static_cast<OpKind>(r.peer2)));
  } else {
    w.field("bytes", r.bytes);
  }
  if (is_p2p(r.kind)) w.field("tag", r.tag);
  w.field("enq_ns", r.enq_ns).field("start_ns", r.start_ns).field("end_ns", r.end_ns);
  w.field("compute_ns", r.compute_ns);
  if (r.dev_ns >= 0) w.field("dev_ns", r.dev_ns);
  w.end();
}

}  // namespace

int write_dump(const char* reason) {
  ProcessState& p = process();
  if (!p.ring || p.dump_path[0] == '\0') return ENOENT;
  int expected = 0;
  if (!p.dumping.compare_exchange_strong(expected, 1)) return EBUSY;
  int rc = 0;
  const int fd = ::open(p.dump_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    rc = errno;
  } else {
    {
      LineWriter w(fd);
      write_header(w, p, reason);
      write_comms(w, p);
      const uint64_t head = p.ring->head();
      for (uint64_t i = p.ring->tail(); i < head; ++i) {
        Record r;
        if (!p.ring->read(i, &r)) continue;
        r.dev_ns = p.device_times.find(i);
        write_record(w, p, in_ns(r));
      }
      w.flush();
      if (w.failed()) rc = EIO;
    }
    if (::close(fd) != 0 && rc == 0) rc = errno;
    if (rc == 0 && ::rename(p.dump_tmp, p.dump_path) != 0) rc = errno;
  }
  p.dumping.store(0);
  return rc;
}

}  // namespace strata::fault
