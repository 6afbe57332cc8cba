// Point-to-point on device buffers through NCCL (nccl/device_p2p.cpp;
// nccl/nccl_stub.cpp in builds without NCCL), for the public send, recv,
// groups and exchange of p2p_api.cpp. The NCCL communicator is the one the
// collectives use for the context's communicator (device_state.hpp).
#pragma once

#include <strata/collectives.hpp>

#include "collectives/context.hpp"

#include <cstddef>

namespace strata::coll::device {

// One device transfer of a group.
struct P2pOp {
  bool send = true;
  void* buffer = nullptr;
  size_t bytes = 0;
  int peer = 0;
  Context* context = nullptr;
  int device = -1;  // the buffer's device
  void* stream = nullptr;
};

// Does the loaded NCCL have ncclSend / ncclRecv (2.7 and later)? Said once
// when it does not.
bool p2p_available() noexcept;

// Creates the NCCL communicator of op.context on op.device if it has none
// yet: collective over the context's communicator the first time.
Status p2p_prepare(const P2pOp& op) noexcept;

// Posts the transfers as one NCCL group, each on its stream (its device
// made current for the call), and returns once they are queued.
Status p2p_post(const P2pOp* ops, size_t count) noexcept;

}  // namespace strata::coll::device
