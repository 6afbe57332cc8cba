// One large strided message moved between two processes in chunks, so that
// the receiver unpacks chunk k while the sender packs chunk k+1 (the
// device-direct transport's single large vector: pack and unpack each take
// about as long as the transfer, and in sequence the message moved at half
// the contiguous rate; docs/device.md, "A large strided message in
// chunks"). The sender packs into its device staging and records one IPC
// event per chunk (pack_order.hpp); the receiver's work stream waits for
// chunk k's event before it reads chunk k's bytes from the mapped staging.
#pragma once

#include <strata/layout.hpp>
#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/device_transfer.hpp"
#include "portability/mover/pack_order.hpp"

#include <cstdint>

namespace strata::mover {

// How a message of `bytes` packed bytes is cut: `chunks` pieces of
// `chunk_bytes` (whole blocks; the last piece may be shorter).
struct ChunkPlan {
  int chunks = 0;
  int64_t chunk_bytes = 0;
};
// At most kPackChunks pieces of whole `block`-byte blocks, each of at least
// `min_chunk_bytes` (so fewer pieces for a smaller message); one piece where
// the message is smaller than two.
ChunkPlan plan_chunks(int64_t bytes, int64_t block, int64_t min_chunk_bytes);

// Packs the one strided part of `message` (the device method: device
// staging) in the plan's pieces, each followed by a record of its own
// chunk event, and returns without waiting: *order names them (chunks > 0).
// Where the runtime has no IPC events it packs, waits, and leaves
// order->chunks 0.
Status device_pack_chunked(DeviceMessage& message, const DevicePart& part, const ChunkPlan& plan, PackOrder* order);

// The sender's chunks as the receiver knows them from its descriptor.
struct ChunkedSource {
  const gpu::IpcEventHandle* events = nullptr;  // chunk k's event, k < chunks
  int chunks = 0;
  int64_t chunk_bytes = 0;
  int64_t exporter_pid = 0;
};

// Unpacks the first `received` packed bytes at `packed` (the sender's
// staging, mapped) into (layout, user) on `device` (a contiguous layout:
// copied), piece by piece: before it reads bytes of chunk k, the work
// stream waits for chunk k's event. Queued, not waited for: the caller
// ends with wait_for_queued_unpacks().
Status device_unpack_chunked(int device, const char* packed, const StridedBlock& layout, char* user, int64_t received,
                             const ChunkedSource& source);

}  // namespace strata::mover
