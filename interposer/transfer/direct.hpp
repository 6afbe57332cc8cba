// The device-direct transport between ranks of one node (docs/device.md,
// "GPU to GPU within a node"): a large device message to a node peer that
// proved at MPI_Init that it can read this rank's GPU memory travels as a
// descriptor (direct_descriptor.hpp) in an ordinary MPI message; the
// receiver matches it as the library decides, then pulls the bytes from the
// sender's GPU through IPC (portability/gpu/ipc_cache.hpp) straight into its
// buffer, unpacking a derived type on the way, and says so through the
// sender's completion slot (portability/host/shared_slots.hpp). A sender
// whose receiver does not come within a bound moves the bytes to a device
// bounce of its own and completes, so no send waits on the receiver's
// progress.
//
// On where every rank asks for it (STRATA_P2P_IPC=auto, the default, or on)
// and, under auto, no node has more ranks than GPUs without MPS (the same
// answer on every rank, agreed at MPI_Init): then every receive of exactly
// a descriptor's size, host buffers included, is checked for one. A message
// to self goes the same way, copied on the device without IPC.
#pragma once

#include "interposer/transfer/direct_active.hpp"
#include "interposer/transfer/direct_descriptor.hpp"
#include "interposer/transfer/plan.hpp"
#include "portability/host/shared_slots.hpp"
#include "portability/mover/chunked_transfer.hpp"
#include "portability/mover/pack_order.hpp"
#include "portability/mover/staging.hpp"

#include <mpi.h>

#include <cstdint>
#include <memory>

namespace strata::interposer {

namespace device_direct {

// This rank's learn_job flag: it asks for the transport.
uint8_t job_flag() noexcept;
// MPI_Init, after learn_job, on every rank: where every rank asked, proves
// which node peers can read this rank's GPU memory (a real transfer each;
// collective over `world`) and opens this rank's completion slots.
void setup(MPI_Comm world) noexcept;
// MPI_Finalize: closes the slots (waits a bounded time for receivers).
void teardown() noexcept;

// active() (direct_active.hpp): can descriptors arrive here (every rank
// turned the transport on)? The same answer on every rank.

// Does a send of `plan` to member `dest` of `comm` travel as a descriptor?
bool takes(const Plan& plan, MPI_Comm comm, int dest) noexcept;

// How such a send of a strided message is packed: in chunks the receiver
// unpacks as each is packed (STRATA_P2P_IPC_CHUNK), or whole (chunks 0).
mover::ChunkPlan chunk_plan_for(const Plan& plan);

}  // namespace device_direct

// A send's descriptor and what it holds until the receiver has the bytes:
// the slot, and the packed bytes of a derived type. Destroyed (the send
// completes), it waits for the receiver or moves the bytes to a bounce
// (bounded); a descriptor that was never sent takes its slot back.
class DirectSend {
 public:
  DirectSend() = default;
  DirectSend(DirectSend&& other) noexcept;
  DirectSend& operator=(DirectSend&& other) noexcept;
  DirectSend(const DirectSend&) = delete;
  DirectSend& operator=(const DirectSend&) = delete;
  ~DirectSend() { complete(); }

  // Publishes the bytes of `plan` at `buf` (a device buffer): ok, or
  // not_supported where this message must go another way (no slot free, an
  // allocation the runtime cannot export), or the failure of packing.
  // `packed`: the message already packed on the device (a deferred send's
  // batch), taken over on success and left there otherwise; `order`: that
  // pack is still running (the descriptor tells the receiver to wait for
  // it on its GPU, and this send waits for it before it copies or frees
  // the bytes itself).
  Status post(const Plan& plan, const void* buf, mover::Staging* packed = nullptr,
              const mover::PackOrder* order = nullptr);
  explicit operator bool() const { return posted_; }
  // The descriptor to send (its address stays while this lives and moves).
  const DirectDescriptor* descriptor() const { return descriptor_.get(); }
  // The library did not take the descriptor: nobody will claim the slot.
  void not_sent() { sent_ = false; }
  // Waits for the receiver (or rehomes); the user's buffer is free after.
  void complete();

 private:
  bool posted_ = false;
  bool sent_ = true;
  slots::Ticket ticket_{};
  mover::Staging packed_;  // a derived type's packed bytes (device memory)
  std::unique_ptr<DirectDescriptor> descriptor_;
  // What a rehoming copies, and the pack still filling it (heap: the slot
  // table keeps its address).
  void* source_ = nullptr;
};

// Where a receive that got a descriptor puts the message: a device buffer
// of a reducible type (its layout: unpacked by the kernels straight from
// the sender's GPU), or host memory laid out by (count, type).
struct DirectTarget {
  void* buffer = nullptr;
  int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int64_t capacity = 0;                         // the bytes it takes
  const StridedBlock* device_layout = nullptr;  // a device buffer: the plan's block over `buffer`
  int device = -1;
};

// The receiving side, after the library completed a receive with `status`.
// When exactly a descriptor's bytes arrived and they are one of this job's
// (`host_bytes`: where the host reads them; null: packed again from the
// target, host memory), pulls the message into the target, sets the
// status's count to the message's size and returns true with *rc the
// outcome (MPI_ERR_TRUNCATE when the target is too small, which still
// completes the sender). False: the bytes are the program's own.
// With `wait` false, a device target's copies may stay queued on the device
// (wait_for_queued_unpacks, then finish_queued_pulls, which hands the
// senders their buffers back).
bool receive_direct(const DirectTarget& target, const char* host_bytes, MPI_Status& status, int* rc, bool wait = true);
// After wait_for_queued_unpacks (whatever it answered): tells the senders of
// the pulls left queued that their bytes arrived, and releases the mappings.
bool have_queued_pulls() noexcept;
void finish_queued_pulls() noexcept;

}  // namespace strata::interposer
