// Builds without NCCL: no device backend; the API stages device buffers
// through host memory (collectives/on_host.hpp, and p2p_api.cpp for
// send/receive).
#include "collectives/device_backend.hpp"
#include "collectives/p2p_backend.hpp"

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

bool p2p_available() noexcept { return false; }
Status p2p_prepare(const P2pOp&) noexcept { return Status::not_supported; }
Status p2p_post(const P2pOp*, size_t count) noexcept { return count == 0 ? Status::ok : Status::not_supported; }

}  // namespace strata::coll::device
