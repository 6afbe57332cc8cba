// Builds without NCCL: no device backend; the API stages device buffers
// through host memory (collectives/on_host.hpp).
#include "collectives/device_backend.hpp"

namespace strata::coll::device {

struct State {};
void destroy(State* state) noexcept { delete state; }

bool nccl_available() noexcept { return false; }
Algorithm usable(Algorithm, const Context&) noexcept { return Algorithm::library; }

Status allreduce(Context&, const void*, void*, size_t, DataType, ReduceOp, Algorithm, void*) noexcept {
  return Status::not_supported;
}
Status reduce_scatter(Context&, const void*, void*, size_t, DataType, ReduceOp, Algorithm, void*) noexcept {
  return Status::not_supported;
}
Status allgather(Context&, const void*, void*, size_t, DataType, Algorithm, void*) noexcept {
  return Status::not_supported;
}
Status broadcast(Context&, void*, size_t, DataType, int, Algorithm, void*) noexcept { return Status::not_supported; }
Status reduce(Context&, const void*, void*, size_t, DataType, ReduceOp, int, Algorithm, void*) noexcept {
  return Status::not_supported;
}

}  // namespace strata::coll::device
