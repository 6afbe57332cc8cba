// Packs a reader in another process waits for on its GPU (pack_order.hpp).
#include "portability/mover/pack_order.hpp"

#include "base/log.hpp"
#include "portability/mover/counters.hpp"
#include "portability/mover/streams.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

namespace strata::mover {
namespace {

bool same(const gpu::IpcEventHandle& a, const gpu::IpcEventHandle& b) {
  return std::memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0;
}

// Events this process can wait on, by the handle they were exported or
// opened with: its own (a message to self) and its peers' (opened once).
struct KnownEvent {
  int64_t pid;
  gpu::IpcEventHandle handle;
  gpu::Event event;
};

class KnownEvents {
 public:
  void add_own(const gpu::IpcEventHandle& handle, gpu::Event event) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(KnownEvent{getpid(), handle, event});
  }
  // The event of (`pid`, `handle`), opened here at first use.
  Status find_or_open(int64_t pid, const gpu::IpcEventHandle& handle, gpu::Event* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const KnownEvent& k : events_) {
      if (k.pid == pid && same(k.handle, handle)) {
        *out = k.event;
        return Status::ok;
      }
    }
    if (pid == getpid()) return Status::invalid_argument;  // not one of this process's events
    gpu::Event opened = nullptr;
    STRATA_TRY(gpu::ipc_event_open(handle, &opened));
    events_.push_back(KnownEvent{pid, handle, opened});
    *out = opened;
    return Status::ok;
  }

 private:
  std::mutex mutex_;
  std::vector<KnownEvent> events_;  // a few per peer thread and device; kept for the process's lifetime
};

KnownEvents& known() {
  static auto* k = new KnownEvents();  // never destroyed: waits may come from atexit handlers
  return *k;
}

// Makes `count` (at most kPackChunks) IPC events into events[] and
// handles[], all or none, known as this process's own. Where the runtime
// has none, no pack of the stream is left running again (logged once).
Status make_own_events(Streams& s, int count, gpu::Event* events, gpu::IpcEventHandle* handles) {
  if (s.order_unavailable) return Status::not_supported;
  gpu::Event made[kPackChunks] = {};
  gpu::IpcEventHandle made_handles[kPackChunks] = {};
  Status st = count > 0 && count <= kPackChunks ? Status::ok : Status::invalid_argument;
  for (int k = 0; k < count && st == Status::ok; ++k) {
    st = gpu::ipc_event_create(&made[k]);
    if (st == Status::ok) st = gpu::ipc_event_get_handle(made[k], &made_handles[k]);
  }
  if (st != Status::ok) {
    for (gpu::Event e : made) {
      if (e != nullptr) (void)gpu::event_destroy(e);
    }
    s.order_unavailable = true;
    STRATA_LOG_ONCE(info, kDevice,
                    "no IPC events on this runtime: a device-direct sender waits for its pack before its "
                    "descriptor leaves");
    return Status::not_supported;
  }
  for (int k = 0; k < count; ++k) {
    known().add_own(made_handles[k], made[k]);
    events[k] = made[k];
    handles[k] = made_handles[k];
  }
  return Status::ok;
}

}  // namespace

Status record_pack_order(Streams& s, PackOrder* out) {
  if (s.order_unavailable) return Status::not_supported;
  if (s.order == nullptr) STRATA_TRY(make_own_events(s, 1, &s.order, &s.order_handle));
  STRATA_TRY(gpu::event_record(s.order, s.work));
  out->event = s.order_handle;
  out->sequence = ++s.order_records;
  out->local = s.order;
  return Status::ok;
}

int next_chunk_set(Streams& s) {
  const int set = s.chunk_set;
  s.chunk_set = (set + 1) % kChunkSets;
  return set;
}

Status record_chunk_order(Streams& s, int set, int k, PackOrder* out) {
  if (set < 0 || set >= kChunkSets || k < 0 || k >= kPackChunks) return Status::invalid_argument;
  if (s.chunk_events[set][0] == nullptr) {
    STRATA_TRY(make_own_events(s, kPackChunks, s.chunk_events[set], s.chunk_handles[set]));
  }
  STRATA_TRY(gpu::event_record(s.chunk_events[set][k], s.work));
  out->chunk_events = s.chunk_handles[set];
  out->local = s.chunk_events[set][k];
  return Status::ok;
}

Status order_chunk_reads_after(const gpu::IpcEventHandle& event, int64_t exporter_pid, int device) {
  Streams* s = nullptr;
  STRATA_TRY(streams_for(device, &s));
  gpu::Event e = nullptr;
  STRATA_TRY(known().find_or_open(exporter_pid, event, &e));
  STRATA_TRY(gpu::stream_wait_event(s->work, e));
  counters().pack_waits_queued.fetch_add(1, std::memory_order_relaxed);
  return Status::ok;
}

Status wait_for_own_pack(const PackOrder& order) {
  return order.pending() ? gpu::event_synchronize(order.local) : Status::ok;
}

Status order_reads_after(const gpu::IpcEventHandle& event, uint64_t sequence, int64_t exporter_pid, int device) {
  if (sequence == 0) return Status::ok;
  Streams* s = nullptr;
  STRATA_TRY(streams_for(device, &s));
  gpu::Event e = nullptr;
  STRATA_TRY(known().find_or_open(exporter_pid, event, &e));
  auto it = std::find_if(s->waited.begin(), s->waited.end(), [&](const auto& w) { return w.first == e; });
  if (it != s->waited.end() && it->second >= sequence) return Status::ok;  // covered by a wait already queued
  STRATA_TRY(gpu::stream_wait_event(s->work, e));
  counters().pack_waits_queued.fetch_add(1, std::memory_order_relaxed);
  if (it != s->waited.end()) {
    it->second = sequence;
  } else {
    s->waited.emplace_back(e, sequence);
  }
  return Status::ok;
}

Status wait_for_pack(const gpu::IpcEventHandle& event, uint64_t sequence, int64_t exporter_pid) {
  if (sequence == 0) return Status::ok;
  gpu::Event e = nullptr;
  STRATA_TRY(known().find_or_open(exporter_pid, event, &e));
  return gpu::event_synchronize(e);
}

}  // namespace strata::mover
