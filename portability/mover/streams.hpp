// The mover's streams: per thread and device, the stream a flush's packing
// or unpacking is ordered on (kernels and the copy engines' boxes alike:
// one wait covers both), one for pipelined and plain copies, an event
// between them, and the state of the flush in progress (the jobs of the
// next batched launch, the engine chooser, the open batch of unpacks).
// Threads get their own so that one thread's wait never waits for another
// thread's work. Internal to the mover (device_transfer.cpp, copies.cpp).
#pragma once

#include <strata/status.hpp>

#include "portability/gpu/gpu_api.hpp"
#include "portability/gpu/pack_device.hpp"
#include "portability/mover/engine_choice.hpp"
#include "portability/mover/pack_order.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

namespace strata::mover {

struct Streams {
  gpu::Stream work = nullptr;
  gpu::Stream copies = nullptr;
  gpu::Event ready = nullptr;
  // The IPC event recorded after packs that readers in other processes
  // wait for on their GPU (pack_order.hpp): made at first use; how many
  // times it was recorded.
  gpu::Event order = nullptr;
  gpu::IpcEventHandle order_handle{};
  uint64_t order_records = 0;
  bool order_unavailable = false;
  // The chunk events of packs in chunks (pack_order.hpp), by set, a set
  // made together at its first use; the set the next message takes.
  gpu::Event chunk_events[kChunkSets][kPackChunks] = {};
  gpu::IpcEventHandle chunk_handles[kChunkSets][kPackChunks] = {};
  int chunk_set = 0;
  // Packers' events `work` waits for, with the latest record waited for.
  std::vector<std::pair<gpu::Event, uint64_t>> waited;
  bool queued = false;  // unpacks queued without waiting (device_unpack with wait false)
  // Strided parts waiting for one batched launch on `work` (launch_jobs),
  // one queue per direction.
  std::vector<gpu::PackJob> pack_jobs;
  std::vector<gpu::PackJob> unpack_jobs;
  std::vector<gpu::PackJob>& jobs(bool pack) { return pack ? pack_jobs : unpack_jobs; }
  // Contiguous copies queued for a direction's next launch: device-direct
  // pulls (from a peer's GPU into the user's buffer) and small contiguous
  // parts of host-staged messages. At the launch the kernels move them all
  // where there are enough of them, else the copy engine copies each
  // (device_transfer.cpp); the layouts made for the kernels' copies are
  // kept until then.
  struct DeviceCopy {
    char* user;
    char* packed;
    int64_t bytes;
    bool pull;  // between two GPUs' memory
  };
  std::vector<DeviceCopy> pack_queued_copies;
  std::vector<DeviceCopy> unpack_queued_copies;
  std::vector<DeviceCopy>& queued_copies(bool pack) { return pack ? pack_queued_copies : unpack_queued_copies; }
  std::deque<StridedBlock> pack_copy_layouts;
  std::deque<StridedBlock> unpack_copy_layouts;
  std::deque<StridedBlock>& copy_layouts(bool pack) { return pack ? pack_copy_layouts : unpack_copy_layouts; }
  // Kernels or copy engines, measured (engine_choice.hpp).
  EngineChooser engines;
  // The receives unpacked since the last wait with strided parts: the
  // engine chosen when the first was queued, its key, and the host time
  // spent queueing so far (the wait adds its own).
  struct Batch {
    bool open = false;
    Engine engine = Engine::kernels;
    int64_t bytes = 0;
    int64_t parts = 0;
    double busy_us = 0;
  } unpacks;
};

// The calling thread's streams on `device` (made at its first use there,
// ordered after the default stream).
Status streams_for(int device, Streams** out);

// The calling thread's streams of every device it used; null before its
// first device work.
std::map<int, Streams>* thread_streams_if_any();

}  // namespace strata::mover
