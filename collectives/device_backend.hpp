// Collectives on device buffers through NCCL (nccl/; RCCL in a HIP build):
// one NCCL communicator per level communicator, created on first use and
// kept in the context's device state. Builds without NCCL compile
// nccl/nccl_stub.cpp (nccl_available() is false); the API then stages
// device buffers through host memory (on_host.hpp). Every call here is
// ordered on `stream` and returns once queued.
#pragma once

#include <strata/collectives.hpp>

#include "collectives/context.hpp"

namespace strata::coll::device {

// Is an NCCL backend built in and loadable?
bool nccl_available() noexcept;

// The algorithm a device call really runs: library, hierarchical or
// two_level where the context allows it (uniform levels, a shape NCCL can
// split evenly), library otherwise.
Algorithm usable(Algorithm wanted, const Context& context) noexcept;

Status allreduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                 Algorithm algorithm, void* stream) noexcept;
Status reduce_scatter(Context& c, const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op,
                      Algorithm algorithm, void* stream) noexcept;
Status allgather(Context& c, const void* send, void* recv, size_t send_count, DataType type, Algorithm algorithm,
                 void* stream) noexcept;
Status broadcast(Context& c, void* buffer, size_t count, DataType type, int root, Algorithm algorithm,
                 void* stream) noexcept;
Status reduce(Context& c, const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root,
              Algorithm algorithm, void* stream) noexcept;

}  // namespace strata::coll::device
