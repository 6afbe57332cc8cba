// Builds without NCCL: no device backend, so the API stages device buffers
// through host memory (collectives/on_host.hpp, and p2p_api.cpp for
// send/receive) - unless the device stand-in of a CPU build is on
// (STRATA_FAKE_DEVICE), whose stand-in NCCL (fake_nccl.hpp) then answers.
#include "collectives/device_backend.hpp"
#include "collectives/nccl/fake_nccl.hpp"
#include "collectives/p2p_backend.hpp"

#include <new>
#include <vector>

namespace strata::coll::device {

struct State {
  fake_nccl::Comm stand_in;
};
void destroy(State* state) noexcept {
  if (state != nullptr) fake_nccl::release(state->stand_in);
  delete state;
}

bool nccl_available() noexcept { return fake_nccl::enabled(); }
Algorithm usable(Algorithm, const Context&) noexcept { return Algorithm::library; }

namespace {
Result<fake_nccl::Comm*> stand_in(Context& c) noexcept {
  if (!fake_nccl::enabled()) return Status::not_supported;
  if (c.device_state == nullptr) {
    c.device_state = new (std::nothrow) State();
    if (c.device_state == nullptr) return Status::out_of_memory;
  }
  STRATA_TRY(fake_nccl::ready(c.device_state->stand_in, c.comm()));
  return &c.device_state->stand_in;
}
}  // namespace

Status allreduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op, Algorithm,
                 void*) noexcept {
  Result<fake_nccl::Comm*> s = stand_in(c);
  if (!s) return s.status();
  return fake_nccl::allreduce(*s.value(), send, recv, count, type, op);
}
Status reduce_scatter(Context& c, const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op,
                      Algorithm, void*) noexcept {
  Result<fake_nccl::Comm*> s = stand_in(c);
  if (!s) return s.status();
  return fake_nccl::reduce_scatter(*s.value(), send, recv, recv_count, type, op);
}
Status allgather(Context& c, const void* send, void* recv, size_t send_count, DataType type, Algorithm,
                 void*) noexcept {
  Result<fake_nccl::Comm*> s = stand_in(c);
  if (!s) return s.status();
  return fake_nccl::allgather(*s.value(), send, recv, send_count, type);
}
Status broadcast(Context& c, void* buffer, size_t count, DataType type, int root, Algorithm, void*) noexcept {
  Result<fake_nccl::Comm*> s = stand_in(c);
  if (!s) return s.status();
  return fake_nccl::broadcast(*s.value(), buffer, count, type, root);
}
Status reduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root, Algorithm,
              void*) noexcept {
  Result<fake_nccl::Comm*> s = stand_in(c);
  if (!s) return s.status();
  return fake_nccl::reduce(*s.value(), send, recv, count, type, op, root);
}

// Point-to-point: the stand-in's, where it is on.
bool p2p_available() noexcept { return fake_nccl::enabled(); }

Status p2p_prepare(const P2pOp& op) noexcept {
  if (op.context == nullptr) return Status::internal;
  return stand_in(*op.context).status();
}

Status p2p_post(const P2pOp* ops, size_t count) noexcept {
  if (count == 0) return Status::ok;
  std::vector<fake_nccl::P2p> group(count);
  for (size_t i = 0; i < count; ++i) {
    if (ops[i].context == nullptr) return Status::internal;
    Result<fake_nccl::Comm*> s = stand_in(*ops[i].context);
    if (!s) return s.status();
    group[i] = {s.value(), ops[i].send, ops[i].buffer, ops[i].bytes, ops[i].peer};
  }
  return fake_nccl::p2p_group(group.data(), count);
}

}  // namespace strata::coll::device
