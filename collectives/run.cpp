#include "collectives/run.hpp"

#include "collectives/device_backend.hpp"
#include "collectives/on_host.hpp"
#include "portability/gpu/gpu_api.hpp"

namespace strata::coll {
namespace {

bool in_device_memory(const void* p) {
  const ::strata::device::Pointer w = gpu::classify(p);
  return w.kind == ::strata::device::MemoryKind::device || w.kind == ::strata::device::MemoryKind::managed;
}

// One buffer of a call on the NCCL route: itself when it is device memory,
// else a device copy (filled when the call reads it, copied back by flush).
class OnDevice {
 public:
  OnDevice() = default;
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
  ~OnDevice() {
    if (copy_ != nullptr) gpu::free_device(copy_);
  }
  Status open(const void* user, size_t bytes, bool read, void* stream) noexcept {
    user_ = const_cast<void*>(user);
    bytes_ = bytes;
    if (user == nullptr || user == MPI_IN_PLACE || bytes == 0 || in_device_memory(user)) return Status::ok;
    STRATA_TRY(gpu::malloc_device(&copy_, bytes));
    if (read) STRATA_TRY(gpu::memcpy_async(copy_, user, bytes, stream));
    return Status::ok;
  }
  void* data() const noexcept { return copy_ != nullptr ? copy_ : user_; }
  bool copied() const noexcept { return copy_ != nullptr; }
  // After the call's work on `stream`: the result back in host memory.
  Status flush(void* stream) noexcept {
    if (copy_ == nullptr) return Status::ok;
    STRATA_TRY(gpu::memcpy_async(user_, copy_, bytes_, stream));
    return gpu::stream_synchronize(stream);
  }

 private:
  void* user_ = nullptr;
  size_t bytes_ = 0;
  void* copy_ = nullptr;
};

Algorithm host_algorithm(const Decision& d) { return d.route == Route::library ? Algorithm::library : d.algorithm; }

}  // namespace

Status run_allreduce(const Decision& d, const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                     void* stream) noexcept {
  Context& c = *d.context;
  if (d.route != Route::nccl) return on_host::allreduce(c, send, recv, count, type, op, host_algorithm(d), stream);
  const size_t bytes = count * size_of(type);
  OnDevice in, out;
  STRATA_TRY(in.open(send, bytes, true, stream));
  STRATA_TRY(out.open(recv, bytes, send == MPI_IN_PLACE, stream));
  STRATA_TRY(device::allreduce(c, send == MPI_IN_PLACE ? MPI_IN_PLACE : in.data(), out.data(), count, type, op,
                               d.algorithm, stream));
  return out.flush(stream);
}

Status run_reduce_scatter(const Decision& d, const void* send, void* recv, size_t recv_count, DataType type,
                          ReduceOp op, void* stream) noexcept {
  Context& c = *d.context;
  if (d.route != Route::nccl) {
    return on_host::reduce_scatter(c, send, recv, recv_count, type, op, host_algorithm(d), stream);
  }
  const size_t bytes = recv_count * size_of(type);
  const size_t full = bytes * static_cast<size_t>(c.size());
  const bool in_place = send == MPI_IN_PLACE;
  OnDevice in, out;
  STRATA_TRY(in.open(send, full, true, stream));
  STRATA_TRY(out.open(recv, in_place ? full : bytes, in_place, stream));
  STRATA_TRY(device::reduce_scatter(c, in_place ? MPI_IN_PLACE : in.data(), out.data(), recv_count, type, op,
                                    d.algorithm, stream));
  return out.flush(stream);
}

Status run_allgather(const Decision& d, const void* send, void* recv, size_t send_count, DataType type,
                     void* stream) noexcept {
  Context& c = *d.context;
  if (d.route != Route::nccl) return on_host::allgather(c, send, recv, send_count, type, host_algorithm(d), stream);
  const size_t bytes = send_count * size_of(type);
  const bool in_place = send == MPI_IN_PLACE;
  OnDevice in, out;
  STRATA_TRY(in.open(send, bytes, true, stream));
  STRATA_TRY(out.open(recv, bytes * static_cast<size_t>(c.size()), in_place, stream));
  STRATA_TRY(
      device::allgather(c, in_place ? MPI_IN_PLACE : in.data(), out.data(), send_count, type, d.algorithm, stream));
  return out.flush(stream);
}

Status run_broadcast(const Decision& d, void* buffer, size_t count, DataType type, int root, void* stream) noexcept {
  Context& c = *d.context;
  if (d.route != Route::nccl) return on_host::broadcast(c, buffer, count, type, root, host_algorithm(d), stream);
  OnDevice data;
  STRATA_TRY(data.open(buffer, count * size_of(type), c.rank() == root, stream));
  STRATA_TRY(device::broadcast(c, data.data(), count, type, root, d.algorithm, stream));
  return c.rank() == root ? Status::ok : data.flush(stream);
}

Status run_reduce(const Decision& d, const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root,
                  void* stream) noexcept {
  Context& c = *d.context;
  if (d.route != Route::nccl) return on_host::reduce(c, send, recv, count, type, op, root, host_algorithm(d), stream);
  const size_t bytes = count * size_of(type);
  const bool is_root = c.rank() == root;
  const bool in_place = send == MPI_IN_PLACE;
  OnDevice in, out;
  STRATA_TRY(in.open(send, bytes, true, stream));
  if (is_root) STRATA_TRY(out.open(recv, bytes, in_place, stream));
  STRATA_TRY(device::reduce(c, in_place ? MPI_IN_PLACE : in.data(), is_root ? out.data() : recv, count, type, op, root,
                            d.algorithm, stream));
  return is_root ? out.flush(stream) : Status::ok;
}

}  // namespace strata::coll
