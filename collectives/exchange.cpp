#include "collectives/exchange.hpp"

#include "collectives/p2p_backend.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <vector>

namespace strata::coll {
namespace {

// One device buffer holding every block of the call that lies in host
// memory: sends copied in before the group, receives copied out after.
class HostBlocks {
 public:
  HostBlocks() = default;
  HostBlocks(const HostBlocks&) = delete;
  HostBlocks& operator=(const HostBlocks&) = delete;
  ~HostBlocks() {
    if (device_ != nullptr) gpu::free_device(device_);
  }

  // Finds the host blocks, allocates their device copy and queues the
  // sends' bytes into it on `stream`.
  Status open(const Block* sends, const Block* recvs, int n, int device, void* stream) {
    device_id_ = device;
    sends_ = sends;
    recvs_ = recvs;
    send_at_ = offsets(sends, n);
    recv_at_ = offsets(recvs, n);
    if (total_ == 0) return Status::ok;
    STRATA_TRY(gpu::malloc_device(&device_, total_));
    for (int p = 0; p < n; ++p) {
      if (send_at_[p] != kNone) STRATA_TRY(gpu::memcpy_async(at(send_at_[p]), sends[p].data, sends[p].bytes, stream));
    }
    return Status::ok;
  }
  // Where block p's bytes travel: itself, or its place in the device copy.
  void* send_address(int p) const { return send_at_[p] == kNone ? sends_[p].data : at(send_at_[p]); }
  void* recv_address(int p) const { return recv_at_[p] == kNone ? recvs_[p].data : at(recv_at_[p]); }
  // After the group, on `stream`: the received bytes back in host memory.
  Status drain(void* stream) {
    for (size_t p = 0; p < recv_at_.size(); ++p) {
      if (recv_at_[p] != kNone) STRATA_TRY(gpu::memcpy_async(recvs_[p].data, at(recv_at_[p]), recvs_[p].bytes, stream));
    }
    return Status::ok;
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> offsets(const Block* blocks, int n) {
    std::vector<size_t> at(static_cast<size_t>(n), kNone);
    for (int p = 0; p < n; ++p) {
      if (blocks[p].bytes == 0 || on_my_device(blocks[p].data)) continue;
      at[p] = total_;
      total_ += blocks[p].bytes;
    }
    return at;
  }
  void* at(size_t offset) const { return static_cast<char*>(device_) + offset; }
  // NCCL's communicator is the current device's: memory of another device
  // is staged as host memory is.
  bool on_my_device(const void* p) const {
    const ::strata::device::Pointer w = gpu::classify(p);
    return (w.kind == ::strata::device::MemoryKind::device || w.kind == ::strata::device::MemoryKind::managed) &&
           w.device == device_id_;
  }

  const Block* sends_ = nullptr;
  const Block* recvs_ = nullptr;
  std::vector<size_t> send_at_, recv_at_;
  size_t total_ = 0;
  int device_id_ = -1;
  void* device_ = nullptr;
};

}  // namespace

Status run_exchange(const Decision& d, const Block* sends, const Block* recvs) noexcept {
  if (d.route != Route::nccl || d.context == nullptr) return Status::internal;
  Context& c = *d.context;
  const int n = c.size();
  void* const stream = nullptr;  // the default stream, as MPI's blocking calls see device memory
  int device = -1;
  STRATA_TRY(gpu::get_device(&device));
  HostBlocks host;
  STRATA_TRY(host.open(sends, recvs, n, device, stream));
  std::vector<device::P2pOp> ops;
  ops.reserve(2 * static_cast<size_t>(n));
  for (int pass = 0; pass < 2; ++pass) {
    const bool send = pass == 0;
    const Block* blocks = send ? sends : recvs;
    for (int p = 0; p < n; ++p) {
      if (blocks[p].bytes == 0) continue;
      device::P2pOp op;
      op.send = send;
      op.buffer = send ? host.send_address(p) : host.recv_address(p);
      op.bytes = blocks[p].bytes;
      op.peer = p;
      op.context = &c;
      op.device = device;
      op.stream = stream;
      ops.push_back(op);
    }
  }
  // Every rank makes the NCCL communicator, also one with nothing to move
  // (its creation is collective).
  device::P2pOp any;
  any.context = &c;
  any.device = device;
  STRATA_TRY(device::p2p_prepare(any));
  STRATA_TRY(device::p2p_post(ops.data(), ops.size()));
  STRATA_TRY(host.drain(stream));
  return gpu::stream_synchronize(stream);
}

}  // namespace strata::coll
