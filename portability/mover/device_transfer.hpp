// Moving strided device data through a transport that may know nothing of
// GPUs (an MPI without GPU support): packing and unpacking on the kernels
// or the copy engines (engine_choice.hpp), through staging (staging.hpp).
//
// A message is a list of parts (one for point-to-point, one per peer for
// all-to-alls), each a strided layout over a device buffer, laid out back to
// back in the packed bytes the transport moves. The method (method.hpp)
// decides where those bytes live for it:
//   device   device staging memory (only for a transport that takes it)
//   oneshot  mapped pinned host memory, written and read by the kernels
//   staged   pinned host memory, filled from device staging by the copy
//            engine, pipelined in chunks (the next chunk is packed while
//            the previous one is copied); for a message of kUnpinnedFrom
//            bytes or more, plain host memory where the pool keeps no
//            pinned buffer for it (Staging::pinned_if_kept), which makes
//            any such message staged
// Device staging is taken when a strided part is packed or unpacked, not
// when the message is reserved (a receive may get a device-direct
// descriptor, or contiguous data the copy engine moves straight).
// Contiguous parts are plain copies. Every call here waits for the device
// before returning (device_unpack may leave that to
// wait_for_queued_unpacks): the transport may touch the bytes as soon as it
// has them.
#pragma once

#include <strata/layout.hpp>
#include <strata/status.hpp>

#include "portability/mover/method.hpp"
#include "portability/mover/pack_order.hpp"
#include "portability/mover/staging.hpp"

#include <cstddef>
#include <cstdint>

namespace strata::mover {

struct DevicePart {
  const StridedBlock* layout;
  char* user;             // the user's buffer pointer (the layout's offsets apply to it)
  int64_t packed_offset;  // where the part starts in the packed bytes
};

// From this many bytes a message's host staging is pinned only where the
// pool keeps a buffer for it (below, a pinned allocation is cheap and kept).
constexpr int64_t kUnpinnedFrom = int64_t{1} << 20;

// The packed bytes of one side of a device transfer.
class DeviceMessage {
 public:
  DeviceMessage() = default;
  // The span method moves no packed bytes: a message always has a packing
  // method (span falls back to oneshot).
  DeviceMessage(int device, Method method)
      : device_(device), method_(method == Method::span ? Method::oneshot : method) {}
  // What the transport sends from or receives into.
  char* mpi_buffer() const { return method_ == Method::device ? device_staging.data() : host_staging.data(); }
  int device() const { return device_; }
  Method method() const { return method_; }
  int64_t reserved() const { return bytes_; }
  // Reserves `bytes` of staging for this message's method: the memory the
  // transport moves (mpi_buffer); device staging of the staged method
  // comes later (device_staging_for).
  Status reserve(int64_t bytes);
  // The staged method's device staging, taken on first use.
  Status device_staging_for();
  // Host staging the kernels can reach (mapped pinned memory).
  bool host_mapped() const { return host_staging.device_view() != nullptr; }
  // Gives up the staging without freeing it (the transport may still touch
  // it).
  void leak() {
    host_staging.leak();
    device_staging.leak();
  }

  Staging host_staging;    // pinned; oneshot and staged
  Staging device_staging;  // device; staged and device

 private:
  int device_ = 0;
  Method method_ = Method::staged;
  int64_t bytes_ = 0;  // reserved
};

// Packs the parts (all in memory of the message's device) into `message`,
// reserved for their bytes; returns when the bytes are in place.
Status device_pack(DeviceMessage& message, const DevicePart* parts, size_t count);

// Packs several messages at once: the strided parts of all messages of one
// device that are not staged go in batched launches and one wait per device
// (a rank's many small halo faces cost one launch, not one each).
// With `order`: where every message is device staging (the device
// method) on one device, the pack is left running and *order names the
// IPC event record that follows it (pack_order.hpp; the caller must see
// that every reader waits for it); otherwise it is waited for as without,
// and order->sequence is 0.
struct PackTask {
  DeviceMessage* message;
  const DevicePart* parts;
  size_t count;
};
Status device_pack_all(const PackTask* tasks, size_t count, PackOrder* order = nullptr);

// Unpacks the first `received` packed bytes of `message` into the parts; a
// shorter message fills only what arrived, up to a partial block. Returns
// when the user's buffers hold the bytes, or, with `wait` false, once the
// work is queued: then the message must stay alive until
// wait_for_queued_unpacks() returns (a completion call finishing many
// receives waits for the device once, not once per receive). Queued work
// is launched in one batch there, or with `launch_now` before this returns
// (a large message, unpacked while the next one arrives).
Status device_unpack(DeviceMessage& message, const DevicePart* parts, size_t count, int64_t received, bool wait = true,
                     bool launch_now = false);
Status wait_for_queued_unpacks();

// Logs (STRATA_LOG=info) the calling thread's measured engine times per
// flush size and the engine each one uses (the interposer's MPI_Finalize).
void log_engine_choices();

}  // namespace strata::mover
