// Plain copies on the copy engines (copies.hpp).
#include "portability/mover/copies.hpp"

#include "portability/gpu/gpu_api.hpp"
#include "portability/mover/streams.hpp"

#include <algorithm>
#include <cstring>

namespace strata::mover {

Status copy_bytes(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return Status::ok;
  // On the device that owns either side (the copy engine of that device).
  const device::Pointer d = gpu::classify(dst);
  const device::Pointer s_ = gpu::classify(src);
  const int device = d.device >= 0 ? d.device : s_.device;
  if (device < 0) {  // host to host
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return Status::ok;
  }
  gpu::ScopedDevice on(device);
  STRATA_TRY(on.status());
  Streams* s = nullptr;
  STRATA_TRY(streams_for(device, &s));
  STRATA_TRY(gpu::memcpy_async(dst, src, static_cast<size_t>(bytes), s->copies));
  return gpu::stream_synchronize(s->copies);
}

Status copy_runs(char* dst, const char* src, const std::pair<int64_t, int64_t>* runs, size_t count) {
  if (count == 0) return Status::ok;
  const device::Pointer d = gpu::classify(dst + runs[0].first);
  const device::Pointer s_ = gpu::classify(src + runs[0].first);
  const int device = d.device >= 0 ? d.device : s_.device;
  if (device < 0) {
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(dst + runs[i].first, src + runs[i].first, static_cast<size_t>(runs[i].second));
    }
    return Status::ok;
  }
  gpu::ScopedDevice on(device);
  STRATA_TRY(on.status());
  Streams* s = nullptr;
  STRATA_TRY(streams_for(device, &s));
  for (size_t i = 0; i < count; ++i) {
    STRATA_TRY(
        gpu::memcpy_async(dst + runs[i].first, src + runs[i].first, static_cast<size_t>(runs[i].second), s->copies));
  }
  return gpu::stream_synchronize(s->copies);
}

Status copy_span_to_host(int device, const char* user, int64_t lo, int64_t hi, Staging* host) {
  gpu::ScopedDevice on(device);
  STRATA_TRY(on.status());
  Streams* s = nullptr;
  STRATA_TRY(streams_for(device, &s));
  *host = Staging::acquire(pinned_pool(), std::max<int64_t>(hi - lo, 1));
  if (!*host) return Status::out_of_memory;
  if (hi > lo) STRATA_TRY(gpu::memcpy_async(host->data(), user + lo, static_cast<size_t>(hi - lo), s->copies));
  return gpu::stream_synchronize(s->copies);
}

Status copy_span_to_device(int device, const Staging& host, char* user, int64_t lo, int64_t hi) {
  gpu::ScopedDevice on(device);
  STRATA_TRY(on.status());
  Streams* s = nullptr;
  STRATA_TRY(streams_for(device, &s));
  if (hi > lo) STRATA_TRY(gpu::memcpy_async(user + lo, host.data(), static_cast<size_t>(hi - lo), s->copies));
  return gpu::stream_synchronize(s->copies);
}

}  // namespace strata::mover
