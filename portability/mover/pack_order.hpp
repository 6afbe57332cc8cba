// A pack left running on the device, and how a reader in another process
// orders its copies after it (docs/device.md, "A descriptor ahead of its
// pack").
//
// The packer (device_pack_all with a PackOrder) queues the pack, records
// this thread's IPC event of the packing device after it and returns
// without waiting; the order names the event and the number of that record
// (records of one event follow each other on one stream, so a wait for a
// later record also covers an earlier one). The reader calls order_reads_after
// before it queues copies that read the packed bytes: its work stream on
// that device then waits for the record on the GPU, not its thread on the
// host; a record its stream already waited for (or a later one) is not
// waited for again. A reader in the packing process itself (a message to
// self) finds the event among this process's own.
//
// A pack in chunks (device_pack_chunked, for one large message): chunk k is
// followed by a record of chunk event k of one of the thread's kChunkSets
// sets of kPackChunks events per device, so that a reader unpacks chunk k
// while chunk k+1 is packed. A reader waits for chunk event k before it
// reads chunk k's bytes (order_chunk_reads_after). Records of one event
// follow each other on the packer's one stream, so a wait that finds a
// later message's record of that event waits longer than needed, never too
// little; consecutive messages take the sets in turn, so that happens only
// to a reader kChunkSets messages behind (with one set, a window of 16
// messages in flight read 30% slower: each reader waited for the packs of
// the messages after its own).
#pragma once

#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"

#include <cstdint>

namespace strata::mover {

struct Streams;

// Chunk events per set, so at most this many chunks a message; sets per
// thread and device.
constexpr int kPackChunks = 8;
constexpr int kChunkSets = 8;

struct PackOrder {
  gpu::IpcEventHandle event{};  // the packer's IPC event
  uint64_t sequence = 0;        // its record that follows the pack; 0: nothing to wait for
  gpu::Event local = nullptr;   // the event in the packer's process (its own waits: the last record)
  // A pack in chunks: `chunks` (> 0) pieces of `chunk_bytes` packed bytes
  // (the last may be shorter), piece k followed by a record of
  // chunk_events[k] (kPackChunks handles, the packing thread's on that
  // device, alive as long as the thread). sequence stays 0.
  int chunks = 0;
  int64_t chunk_bytes = 0;
  const gpu::IpcEventHandle* chunk_events = nullptr;
  bool pending() const { return sequence != 0 || chunks != 0; }
};

// The packer: records this thread's IPC event of `device` on s.work (made
// at the first call); not_supported where the runtime has no IPC events
// (the caller then waits for the pack itself).
Status record_pack_order(Streams& s, PackOrder* out);

// The packer, in chunks: the set of chunk events the next message takes
// (in turn), and the record of the set's event `k` on s.work (the set's
// events are made at its first record); not_supported where the runtime
// has no IPC events.
int next_chunk_set(Streams& s);
Status record_chunk_order(Streams& s, int set, int k, PackOrder* out);

// The packer's own wait for its pack (a send whose bytes it must copy or
// release): the event's latest record.
Status wait_for_own_pack(const PackOrder& order);

// The reader: this thread's work stream on `device` (the stream the
// mover's unpacks and copies of that device use) waits on the GPU for the
// record `sequence` of the event `event` that process `exporter_pid`
// exported. Opened events are kept for the process's lifetime.
Status order_reads_after(const gpu::IpcEventHandle& event, uint64_t sequence, int64_t exporter_pid, int device);
// The reader of a chunk: the work stream on `device` waits for the latest
// record of the chunk event `event` (always queued: a chunk event's records
// carry no number).
Status order_chunk_reads_after(const gpu::IpcEventHandle& event, int64_t exporter_pid, int device);
// The same, with the calling thread waiting (a reader that copies the bytes
// to host memory).
Status wait_for_pack(const gpu::IpcEventHandle& event, uint64_t sequence, int64_t exporter_pid);

}  // namespace strata::mover
