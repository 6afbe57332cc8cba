// One large strided message in chunks between two processes
// (chunked_transfer.hpp).
#include "portability/mover/chunked_transfer.hpp"

#include "portability/gpu/pack_device.hpp"
#include "portability/layout/strided_index.hpp"
#include "portability/mover/streams.hpp"

#include <algorithm>

namespace strata::mover {

ChunkPlan plan_chunks(int64_t bytes, int64_t block, int64_t min_chunk_bytes) {
  if (bytes <= 0 || block <= 0) return ChunkPlan{};
  const int64_t least = std::max<int64_t>(min_chunk_bytes, 1);
  const int64_t pieces = std::clamp<int64_t>(bytes / least, 1, kPackChunks);
  const int64_t blocks = (bytes + block - 1) / block;
  const int64_t blocks_each = (blocks + pieces - 1) / pieces;
  ChunkPlan plan;
  plan.chunk_bytes = blocks_each * block;
  plan.chunks = static_cast<int>((bytes + plan.chunk_bytes - 1) / plan.chunk_bytes);
  return plan;
}

Status device_pack_chunked(DeviceMessage& message, const DevicePart& part, const ChunkPlan& plan, PackOrder* order) {
  *order = PackOrder{};
  const StridedBlock& layout = *part.layout;
  if (message.method() != Method::device || !message.device_staging || layout.contiguous() || plan.chunks < 1 ||
      plan.chunks > kPackChunks || plan.chunk_bytes <= 0 || plan.chunk_bytes % layout.block != 0) {
    return Status::invalid_argument;
  }
  gpu::ScopedDevice on(message.device());
  STRATA_TRY(on.status());
  Streams* s = nullptr;
  STRATA_TRY(streams_for(message.device(), &s));
  char* packed = message.device_staging.data() + part.packed_offset;
  const int64_t blocks = layout.block_count();
  const int64_t step = plan.chunk_bytes / layout.block;
  PackOrder made;
  const int set = next_chunk_set(*s);
  bool ordered = true;
  Status st = Status::ok;
  for (int k = 0; k < plan.chunks && st == Status::ok; ++k) {
    const int64_t b = k * step, e = std::min(blocks, b + step);
    if (b < e) st = gpu::pack_async(layout, part.user, packed + b * layout.block, s->work, b, e);
    if (st != Status::ok || !ordered) continue;
    const Status recorded = record_chunk_order(*s, set, k, &made);
    if (recorded == Status::not_supported && k == 0) {
      ordered = false;  // no IPC events here: pack it all, then wait
    } else {
      st = recorded;
    }
  }
  if (st != Status::ok || !ordered) {
    const Status waited = gpu::stream_synchronize(s->work);  // nothing may still write the staging after an error
    return st != Status::ok ? st : waited;
  }
  made.chunks = plan.chunks;
  made.chunk_bytes = plan.chunk_bytes;
  *order = made;
  return Status::ok;
}

Status device_unpack_chunked(int device, const char* packed, const StridedBlock& layout, char* user, int64_t received,
                             const ChunkedSource& source) {
  if (source.events == nullptr || source.chunks < 1 || source.chunks > kPackChunks || source.chunk_bytes <= 0 ||
      layout.block <= 0) {
    return Status::invalid_argument;
  }
  gpu::ScopedDevice on(device);
  STRATA_TRY(on.status());
  Streams* s = nullptr;
  STRATA_TRY(streams_for(device, &s));
  received = std::min(received, layout.packed_bytes());
  char* from = const_cast<char*>(packed);
  int64_t done = 0;         // packed bytes queued so far
  int64_t blocks_done = 0;  // of a strided layout: whole blocks queued so far
  Status st = Status::ok;
  for (int k = 0; k < source.chunks && done < received && st == Status::ok; ++k) {
    const int64_t end = k + 1 == source.chunks ? received : std::min(received, (k + 1) * source.chunk_bytes);
    st = order_chunk_reads_after(source.events[k], source.exporter_pid, device);
    if (st != Status::ok) break;
    if (layout.contiguous()) {
      st = gpu::memcpy_async(user + layout.offset + done, from + done, static_cast<size_t>(end - done), s->work);
    } else {
      const int64_t upto = end / layout.block;
      if (upto > blocks_done) {
        st = gpu::unpack_async(layout, from + blocks_done * layout.block, user, s->work, blocks_done, upto);
      }
      blocks_done = upto;
    }
    done = end;
  }
  const int64_t tail = layout.contiguous() ? 0 : received - blocks_done * layout.block;
  if (st == Status::ok && tail > 0) {  // a short receive ending inside a block
    char* at = user + detail::block_offset(layout.offset, layout.dims.data(), static_cast<int>(layout.dims.size()),
                                           blocks_done);
    st = gpu::memcpy_async(at, from + blocks_done * layout.block, static_cast<size_t>(tail), s->work);
  }
  if (st != Status::ok) {
    (void)gpu::stream_synchronize(s->work);  // nothing may still read the sender's bytes after an error
    return st;
  }
  s->queued = true;
  return Status::ok;
}

}  // namespace strata::mover
