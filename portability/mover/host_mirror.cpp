// Host views of buffers that may be in GPU memory (host_mirror.hpp).
#include "portability/mover/host_mirror.hpp"

#include "base/log.hpp"

namespace strata::mover {

bool is_device_memory(const void* p) noexcept {
  if (p == nullptr) return false;
  const device::MemoryKind k = gpu::classify(p).kind;
  return k == device::MemoryKind::device || k == device::MemoryKind::managed;
}

Status HostMirror::open(void* user, size_t bytes, bool read, gpu::Stream stream) noexcept {
  user_ = user;
  bytes_ = bytes;
  copy_ = Staging();
  if (bytes == 0 || !is_device_memory(user)) {
    data_ = static_cast<char*>(user);
    return Status::ok;
  }
  // Host copies and a synchronisation cannot be captured in a graph (and
  // would invalidate the capture): refuse before touching the stream.
  bool capturing = false;
  if (gpu::is_capturing(stream, &capturing) == Status::ok && capturing) {
    STRATA_LOG_ONCE(warn, kDevice,
                    "a device buffer would be staged through host memory while its stream is captured in a "
                    "graph (ranks that share a GPU, or a build without NCCL): not capturable, refused");
    return Status::not_supported;
  }
  copy_ = Staging::pinned_or_host(static_cast<int64_t>(bytes));
  if (!copy_) return Status::out_of_memory;
  data_ = copy_.data();
  if (!read) return Status::ok;
  STRATA_TRY(gpu::memcpy_async(data_, user, bytes, stream));
  return gpu::stream_synchronize(stream);
}

Status HostMirror::flush(gpu::Stream stream) noexcept {
  if (!copy_) return Status::ok;
  STRATA_TRY(gpu::memcpy_async(user_, data_, bytes_, stream));
  return gpu::stream_synchronize(stream);
}

}  // namespace strata::mover
