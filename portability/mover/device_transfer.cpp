// Device pack and unpack of strided parts through staging
// (device_transfer.hpp).
#include "portability/mover/device_transfer.hpp"

#include "base/config.hpp"
#include "base/log.hpp"
#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/pack_device.hpp"
#include "portability/layout/box_copies.hpp"
#include "portability/layout/strided_index.hpp"
#include "portability/mover/counters.hpp"
#include "portability/mover/engine_choice.hpp"
#include "portability/mover/streams.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>
#include <vector>

namespace strata::mover {

namespace {

config::IntParam g_chunk{"STRATA_PIPELINE_CHUNK",
                         int64_t{2} << 20,
                         "staged method: bytes per pipelined chunk (pack of one chunk overlaps the copy of the last)",
                         int64_t{4} << 10,
                         int64_t{1} << 40,
                         true};

config::IntParam g_kernel_copies{
    "STRATA_DEVICE_KERNEL_COPIES", 8,
    "Contiguous copies that one flush of sends or one batch of receives queues (device-direct pulls between two "
    "GPUs' memory; contiguous parts of up to 64 KiB of host-staged messages): from this many on, the kernels copy "
    "them all in the flush's one launch, below it the copy engine copies each. Measured on 2 x H200, windows of "
    "contiguous 4 MiB pulls, kernels against the copy engine: 2 pulls 172-176 against 178-181 GB/s, 4 even (201-224 "
    "against 201-204), 8 232-237 against 203-219, 64 267-273 against 213-219; one pull alone 5-10 us slower on the "
    "kernels. Windows of 64 staged messages of 1 B-16 KiB (osu_bw D D with STRATA_P2P_IPC=off, 2 x H200): 1.1-2.6x "
    "the rate of a copy-engine copy each",
    1, INT64_MAX};

using Clock = std::chrono::steady_clock;

double micros_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

int64_t part_bytes(const DevicePart& p) { return p.layout->packed_bytes(); }

// Of a receive of `received` bytes, the packed bytes that landed in part p.
int64_t arrived_bytes(const DevicePart& p, int64_t received) {
  return std::clamp<int64_t>(received - p.packed_offset, 0, part_bytes(p));
}

// The first `bytes` packed bytes of a part, as whole blocks and the bytes of
// one more partial block.
struct Prefix {
  int64_t blocks;
  int64_t tail;
};
Prefix prefix_of(const StridedBlock& layout, int64_t bytes) {
  if (layout.block <= 0) return Prefix{0, 0};
  return Prefix{bytes / layout.block, bytes % layout.block};
}

// The user address of block `k` of a layout.
char* block_address(const StridedBlock& layout, char* user, int64_t k) {
  return user + detail::block_offset(layout.offset, layout.dims.data(), static_cast<int>(layout.dims.size()), k);
}

// Copies `bytes` between a contiguous part's data and `packed` on `stream`.
Status copy_contiguous(const DevicePart& part, char* packed, int64_t bytes, bool pack, gpu::Stream stream) {
  if (bytes <= 0) return Status::ok;
  char* user = part.user + part.layout->offset;
  return pack ? gpu::memcpy_async(packed, user, static_cast<size_t>(bytes), stream)
              : gpu::memcpy_async(user, packed, static_cast<size_t>(bytes), stream);
}

// Contiguous bytes as jobs of the next batched launch in direction `pack`
// (user -> packed, or back): whole 4 KiB blocks, and the rest as one block
// of its own, so that no runtime call is made per message.
constexpr int64_t kKernelCopyBlock = 4096;
void queue_contiguous_jobs(Streams& s, bool pack, char* user, char* packed, int64_t bytes) {
  const int64_t blocks = bytes / kKernelCopyBlock;
  const int64_t rest = bytes - blocks * kKernelCopyBlock;
  for (const auto& [block, count] : {std::pair{kKernelCopyBlock, blocks}, std::pair{rest, int64_t{1}}}) {
    if (block <= 0 || count <= 0) continue;
    StridedBlock& layout = s.copy_layouts(pack).emplace_back();
    layout.block = block;
    layout.dims = {Stream{count, block}};
    layout.extent = count * block;
    s.jobs(pack).push_back(gpu::PackJob{&layout, user, packed, 0, count});
    user += count * block;
    packed += count * block;
  }
}

// The queued contiguous copies of one direction, before its launch: the
// kernels' jobs where there are enough of them, else copy-engine copies.
Status place_queued_copies(Streams& s, bool pack) {
  std::vector<Streams::DeviceCopy>& copies = s.queued_copies(pack);
  const bool kernels = static_cast<int64_t>(copies.size()) >= g_kernel_copies.get();
  Status st = Status::ok;
  for (const Streams::DeviceCopy& c : copies) {
    if (st != Status::ok) break;
    if (kernels) {
      (c.pull ? counters().kernel_copies : counters().contiguous_by_kernels).fetch_add(1, std::memory_order_relaxed);
      queue_contiguous_jobs(s, pack, c.user, c.packed, c.bytes);
    } else {
      st = pack ? gpu::memcpy_async(c.packed, c.user, static_cast<size_t>(c.bytes), s.work)
                : gpu::memcpy_async(c.user, c.packed, static_cast<size_t>(c.bytes), s.work);
    }
  }
  copies.clear();
  return st;
}

// Moves the first `bytes` of one part's packed bytes between the user's
// buffer and `packed` (an address the kernels can use) on s.work: when
// contiguous, a copy (queued for the launch, place_queued_copies, when it
// is an unpack between device buffers, `device_to_device`, or `batchable`),
// else a job of the next batched launch (launch_jobs), and a copy of the
// bytes of a last partial block.
Status queue_part(Streams& s, const DevicePart& part, char* packed, int64_t bytes, bool pack,
                  bool device_to_device = false, bool batchable = false) {
  const StridedBlock& layout = *part.layout;
  if (bytes <= 0) return Status::ok;
  const bool pull = layout.contiguous() && device_to_device && !pack;
  if (pull || (layout.contiguous() && batchable)) {
    s.queued_copies(pack).push_back(Streams::DeviceCopy{part.user + layout.offset, packed, bytes, pull});
    return Status::ok;
  }
  if (layout.contiguous()) return copy_contiguous(part, packed, bytes, pack, s.work);
  const Prefix p = prefix_of(layout, bytes);
  if (p.blocks > 0) s.jobs(pack).push_back(gpu::PackJob{&layout, part.user, packed, 0, p.blocks});
  if (p.tail > 0) {  // a short receive ending inside a block
    char* user = block_address(layout, part.user, p.blocks);
    char* bytes_at = packed + p.blocks * layout.block;
    STRATA_TRY(pack ? gpu::memcpy_async(bytes_at, user, static_cast<size_t>(p.tail), s.work)
                    : gpu::memcpy_async(user, bytes_at, static_cast<size_t>(p.tail), s.work));
  }
  return Status::ok;
}

// Launches the queued jobs of one direction (as few kernels as their shapes
// allow); the queue is empty afterwards whatever happened.
Status launch_jobs(Streams& s, bool pack) {
  std::vector<gpu::PackJob>& jobs = s.jobs(pack);
  if (!s.queued_copies(pack).empty()) {
    if (const Status placed = place_queued_copies(s, pack); placed != Status::ok) {
      jobs.clear();
      s.copy_layouts(pack).clear();
      return placed;
    }
  }
  const Status st = jobs.empty() ? Status::ok
                    : pack       ? gpu::pack_batch_async(jobs.data(), jobs.size(), s.work)
                                 : gpu::unpack_batch_async(jobs.data(), jobs.size(), s.work);
  jobs.clear();
  s.copy_layouts(pack).clear();
  return st;
}

// Returns `st`; when it is an error, first drops the jobs of that direction
// queued since the queue held `mark` jobs: they point at buffers the failed
// call's caller releases (jobs queued before, by calls that succeeded,
// stay).
Status dropping_jobs_on_error(Status st, Streams& s, bool pack, size_t mark = 0, size_t copies_mark = 0) {
  if (st != Status::ok && s.jobs(pack).size() > mark) s.jobs(pack).resize(mark);
  if (st != Status::ok && s.queued_copies(pack).size() > copies_mark) s.queued_copies(pack).resize(copies_mark);
  return st;
}

// Blocks of one chunk: whole blocks, at least one.
int64_t chunk_blocks(const StridedBlock& layout) {
  return std::max<int64_t>(1, g_chunk.get() / std::max<int64_t>(layout.block, 1));
}

}  // namespace

Status DeviceMessage::reserve(int64_t bytes) {
  bytes_ = bytes;
  if (method_ == Method::device) {
    device_staging = Staging::acquire(device_pool(device_), bytes);
    return device_staging ? Status::ok : Status::out_of_memory;
  }
  host_staging = bytes >= kUnpinnedFrom ? Staging::pinned_if_kept(bytes) : Staging::acquire(pinned_pool(), bytes);
  if (!host_staging) return Status::out_of_memory;
  if (!host_mapped()) method_ = Method::staged;  // the kernels cannot reach plain host memory
  return Status::ok;
}

Status DeviceMessage::device_staging_for() {
  if (!device_staging) device_staging = Staging::acquire(device_pool(device_), bytes_);
  return device_staging ? Status::ok : Status::out_of_memory;
}

namespace {

// The staged method: pack chunk k while the copy engine moves chunk k-1 to
// the host.
Status pack_staged(Streams& s, DeviceMessage& message, const DevicePart* parts, size_t count) {
  char* host = message.host_staging.data();
  for (size_t i = 0; i < count; ++i) {
    const DevicePart& part = parts[i];
    if (part.layout->contiguous()) {  // the copy engine takes it straight from the user's buffer
      STRATA_TRY(copy_contiguous(part, host + part.packed_offset, part_bytes(part), true, s.copies));
      continue;
    }
    STRATA_TRY(message.device_staging_for());
    char* staging = message.device_staging.data();
    const int64_t blocks = part.layout->block_count();
    const int64_t step = chunk_blocks(*part.layout);
    for (int64_t b = 0; b < blocks; b += step) {
      const int64_t e = std::min(blocks, b + step);
      const int64_t off = part.packed_offset + b * part.layout->block;
      STRATA_TRY(gpu::pack_async(*part.layout, part.user, staging + off, s.work, b, e));
      STRATA_TRY(gpu::event_record(s.ready, s.work));
      STRATA_TRY(gpu::stream_wait_event(s.copies, s.ready));
      STRATA_TRY(
          gpu::memcpy_async(host + off, staging + off, static_cast<size_t>((e - b) * part.layout->block), s.copies));
    }
  }
  return gpu::stream_synchronize(s.copies);
}

// The staged method's pipeline: on the kernels, and on any engine where the
// host staging is plain memory (only copies reach it: the copy engine's
// boxes would too, but not the kernels for the layouts boxes cannot move).
bool takes_pipeline(const DeviceMessage& message, Engine engine) {
  return message.method() == Method::staged && (engine == Engine::kernels || !message.host_mapped());
}

// A message staged through plain host memory (the pinned pool kept no
// buffer for it): counted, and the pool stocked for the next one.
void note_unpinned(const DeviceMessage& message) {
  if (message.method() == Method::device || !message.host_staging || message.host_staging.pinned()) return;
  counters().staged_unpinned.fetch_add(1, std::memory_order_relaxed);
  Staging::keep_pinned(message.reserved());
}

// Messages the transport moves from host memory (oneshot and staged): the
// copy engine can write their bytes straight into the pinned staging, which
// kernels also reach (it is mapped).
bool host_bound(const DeviceMessage& message) { return message.method() != Method::device; }

// Where the kernels write a message's packed bytes outside the staged
// pipeline: the mapped pinned memory of a host-bound message, the device
// staging of a device one.
char* kernel_packed(const DeviceMessage& message) {
  return host_bound(message) ? message.host_staging.device_view() : message.device_staging.data();
}

// At most this many boxes per part on the copy engine (each is one runtime
// call of 2-3 us of host time); a layout needing more goes to the kernels.
constexpr int64_t kMaxBoxesPerPart = 16;

// A contiguous part whose copy is queued for the launch, where the kernels
// move it with the others when a flush has enough of them (each copy-engine
// copy is a runtime call of 3-6 us of host time on the lent machines: a
// window of 64 small messages paid it 64 times): a small one of a one-shot
// message, whose mapped pinned staging the kernels reach. Larger ones stay
// on the copy engines.
constexpr int64_t kBatchedContiguousMax = int64_t{64} << 10;
bool batchable(const DeviceMessage& message, const DevicePart& part, int64_t bytes) {
  return part.layout->contiguous() && message.method() == Method::oneshot && message.host_mapped() &&
         bytes <= kBatchedContiguousMax;
}

// What the engine choice of a flush is keyed on: its strided parts on
// host-bound messages (contiguous parts are copies, or queued copies, whatever
// the engine).
struct Flush {
  int64_t bytes = 0;
  int64_t parts = 0;
  void add(const DeviceMessage& message, const DevicePart* parts_, size_t count) {
    if (!host_bound(message)) return;
    for (size_t i = 0; i < count; ++i) {
      if (parts_[i].layout->contiguous()) continue;
      bytes += part_bytes(parts_[i]);
      ++parts;
    }
  }
};

Engine engine_for(Streams& s, bool pack, const Flush& flush) {
  switch (engine_setting()) {
    case EngineSetting::kernels: return Engine::kernels;
    case EngineSetting::copies: return Engine::copies;
    case EngineSetting::automatic: break;
  }
  return flush.parts > 0 ? s.engines.pick(pack, flush.bytes, flush.parts) : Engine::kernels;
}

// Moves the first `bytes` packed bytes of one part outside the staged
// pipeline. On the copy engines (a host-bound message): contiguous data as
// one copy, a strided layout as boxes when it arrived whole and the boxes
// can move it. Otherwise as queue_part does, into kernel_packed().
Status queue_part_on(Engine engine, Streams& s, const DeviceMessage& message, const DevicePart& part, int64_t bytes,
                     bool pack) {
  const StridedBlock& layout = *part.layout;
  if (engine == Engine::copies && host_bound(message) && bytes > 0) {
    char* host = message.host_staging.data() + part.packed_offset;
    if (layout.contiguous()) return copy_contiguous(part, host, bytes, pack, s.work);
    static thread_local std::vector<detail::BoxCopy> boxes;
    if (bytes == part_bytes(part) && detail::plan_box_copies(layout, kMaxBoxesPerPart, &boxes)) {
      for (const detail::BoxCopy& box : boxes) STRATA_TRY(gpu::copy_box_async(box, part.user, host, pack, s.work));
      counters().parts_by_copy_engine.fetch_add(1, std::memory_order_relaxed);
      return Status::ok;
    }
  }
  return queue_part(s, part, kernel_packed(message) + part.packed_offset, bytes, pack, !host_bound(message),
                    batchable(message, part, bytes));
}

// After a failure: waits for whatever was already queued on the streams
// (copies cannot be taken back), so that nothing still touches staging the
// caller is about to release.
void drain(Streams& s) {
  gpu::stream_synchronize(s.work);
  gpu::stream_synchronize(s.copies);
}

}  // namespace

Status device_pack(DeviceMessage& message, const DevicePart* parts, size_t count) {
  const PackTask task{&message, parts, count};
  return device_pack_all(&task, 1);
}

namespace {

// May a pack of these messages be left running behind an IPC event record?
// Only device staging (a host-bound message's bytes are read by the host
// transport at once) on one device (one stream, one record).
bool may_leave_running(const PackTask* tasks, size_t count) {
  for (size_t t = 0; t < count; ++t) {
    const DeviceMessage& m = *tasks[t].message;
    if (m.method() != Method::device || m.device() != tasks[0].message->device()) return false;
  }
  return count > 0;
}

}  // namespace

Status device_pack_all(const PackTask* tasks, size_t count, PackOrder* order) {
  if (order != nullptr) *order = PackOrder{};
  const bool leave_running = order != nullptr && may_leave_running(tasks, count);
  // The engine for the whole flush (kernels or copy engines, measured per
  // flush size); staged messages on the kernels pipeline their chunks one
  // message at a time; everything else is queued per device, then one
  // batched launch and one wait per device.
  static thread_local std::vector<std::pair<int, Streams*>> used;  // devices with work queued
  used.clear();
  const Clock::time_point start = Clock::now();
  Flush flush;
  for (size_t t = 0; t < count; ++t) flush.add(*tasks[t].message, tasks[t].parts, tasks[t].count);
  Engine engine = Engine::kernels;
  Status st = Status::ok;
  for (size_t t = 0; t < count && st == Status::ok; ++t) {
    DeviceMessage& m = *tasks[t].message;
    gpu::ScopedDevice on(m.device());
    Streams* s = nullptr;
    st = on.status();
    if (st == Status::ok) st = streams_for(m.device(), &s);
    if (st != Status::ok) break;
    if (used.empty()) engine = engine_for(*s, true, flush);  // the first device's chooser keeps the times
    if (std::find(used.begin(), used.end(), std::make_pair(m.device(), s)) == used.end()) {
      used.emplace_back(m.device(), s);
    }
    if (takes_pipeline(m, engine)) {
      st = pack_staged(*s, m, tasks[t].parts, tasks[t].count);
      continue;
    }
    for (size_t i = 0; i < tasks[t].count && st == Status::ok; ++i) {
      const DevicePart& part = tasks[t].parts[i];
      st = queue_part_on(engine, *s, m, part, part_bytes(part), true);
    }
  }
  for (auto& [device, s] : used) {
    gpu::ScopedDevice on(device);
    if (st == Status::ok) st = on.status();
    if (st == Status::ok) st = launch_jobs(*s, true);
    if (st == Status::ok && leave_running && record_pack_order(*s, order) == Status::ok) continue;
    if (st == Status::ok) st = gpu::stream_synchronize(s->work);
    dropping_jobs_on_error(st, *s, true);
    if (st != Status::ok) drain(*s);
  }
  if (st == Status::ok && !used.empty() && flush.parts > 0) {
    used.front().second->engines.record(true, flush.bytes, flush.parts, engine, micros_since(start));
  }
  if (st == Status::ok) {
    for (size_t t = 0; t < count; ++t) note_unpinned(*tasks[t].message);
  }
  return st;
}

namespace {

// The staged method's receive side: copy chunk k up while the kernels
// unpack chunk k-1.
Status unpack_staged(Streams& s, DeviceMessage& message, const DevicePart* parts, size_t count, int64_t received) {
  char* host = message.host_staging.data();
  for (size_t i = 0; i < count; ++i) {
    const DevicePart& part = parts[i];
    const int64_t bytes = arrived_bytes(part, received);
    if (part.layout->contiguous()) {
      STRATA_TRY(copy_contiguous(part, host + part.packed_offset, bytes, false, s.work));
      continue;
    }
    STRATA_TRY(message.device_staging_for());
    char* staging = message.device_staging.data();
    const int64_t block = part.layout->block;
    const Prefix p = prefix_of(*part.layout, bytes);
    const int64_t step = chunk_blocks(*part.layout);
    for (int64_t b = 0; b < p.blocks; b += step) {
      const int64_t e = std::min(p.blocks, b + step);
      const int64_t off = part.packed_offset + b * block;
      STRATA_TRY(gpu::memcpy_async(staging + off, host + off, static_cast<size_t>((e - b) * block), s.copies));
      STRATA_TRY(gpu::event_record(s.ready, s.copies));
      STRATA_TRY(gpu::stream_wait_event(s.work, s.ready));
      STRATA_TRY(gpu::unpack_async(*part.layout, staging + off, part.user, s.work, b, e));
    }
    if (p.tail > 0) {
      STRATA_TRY(gpu::memcpy_async(block_address(*part.layout, part.user, p.blocks),
                                   host + part.packed_offset + p.blocks * block, static_cast<size_t>(p.tail), s.work));
    }
  }
  return Status::ok;
}

// The wait that ends the receive side's batch: the kernels' launch, then
// the wait for the device (all of it ends on s.work); then what the batch
// cost with its engine is recorded.
Status finish_unpacks(Streams& s) {
  const Clock::time_point start = Clock::now();
  Status st = launch_jobs(s, false);
  if (st == Status::ok) st = gpu::stream_synchronize(s.work);
  if (st != Status::ok) drain(s);
  const Streams::Batch& b = s.unpacks;
  if (b.open && st == Status::ok) s.engines.record(false, b.bytes, b.parts, b.engine, b.busy_us + micros_since(start));
  s.unpacks = Streams::Batch{};
  s.queued = false;
  return st;
}

}  // namespace

Status device_unpack(DeviceMessage& message, const DevicePart* parts, size_t count, int64_t received, bool wait,
                     bool launch_now) {
  const Clock::time_point start = Clock::now();
  gpu::ScopedDevice on(message.device());
  STRATA_TRY(on.status());
  Streams* s = nullptr;
  STRATA_TRY(streams_for(message.device(), &s));
  // The engine is chosen for a batch of receives (those one completion call
  // finishes) when its first strided part is queued.
  Flush flush;
  flush.add(message, parts, count);
  Streams::Batch& batch = s->unpacks;
  if (!batch.open && flush.parts > 0) {
    batch = Streams::Batch{true, engine_for(*s, false, flush), flush.bytes, flush.parts, 0};
  }
  const Engine engine = batch.open ? batch.engine : Engine::kernels;
  // A failure part-way leaves none of this call's jobs for a later launch,
  // and nothing queued that still touches the message's staging.
  const size_t mark = s->unpack_jobs.size(), copies_mark = s->queued_copies(false).size();
  Status st = Status::ok;
  if (takes_pipeline(message, engine)) {
    st = unpack_staged(*s, message, parts, count, received);
  } else {
    for (size_t i = 0; i < count && st == Status::ok; ++i) {
      st = queue_part_on(engine, *s, message, parts[i], arrived_bytes(parts[i], received), false);
    }
  }
  if (st != Status::ok) {
    drain(*s);
    return dropping_jobs_on_error(st, *s, false, mark, copies_mark);
  }
  if (batch.open) batch.busy_us += micros_since(start);
  if (!wait) {
    // Launched now rather than with the batch in wait_for_queued_unpacks: a
    // completion call that finishes large receives as they arrive (the
    // interposer's MPI_Waitall) unpacks one while the next is on its way.
    if (launch_now && (st = launch_jobs(*s, false)) != Status::ok) {
      drain(*s);
      return st;
    }
    s->queued = true;
    note_unpinned(message);
    return Status::ok;
  }
  st = finish_unpacks(*s);
  if (st == Status::ok) note_unpinned(message);
  return st;
}

Status wait_for_queued_unpacks() {
  Status result = Status::ok;
  std::map<int, Streams>* streams = thread_streams_if_any();
  if (streams == nullptr) return result;
  for (auto& [device, s] : *streams) {
    if (!s.queued) continue;
    gpu::ScopedDevice on(device);
    Status st = on.status();
    if (st == Status::ok) {
      st = finish_unpacks(s);
    } else {
      s.unpack_jobs.clear();
      s.queued_copies(false).clear();
      s.unpacks = Streams::Batch{};
      s.queued = false;
    }
    if (result == Status::ok) result = st;
  }
  return result;
}

void log_engine_choices() {
  const std::map<int, Streams>* streams = thread_streams_if_any();
  if (streams == nullptr || !log::enabled(log::Level::info, log::kDevice)) return;
  for (const auto& [device, s] : *streams) s.engines.log_summary(device);
}

}  // namespace strata::mover
