// Collectives run by the host algorithms (collectives/host/). Host buffers
// are used in place; device buffers (a build without NCCL, mixed host and
// device buffers) are copied to host memory after `stream` and the results
// copied back, and the call returns when they are in place: correct under
// any build, the fast device path is NCCL's (device_backend.hpp). The
// algorithm is the caller's, except that the library cannot reduce float16
// or bfloat16 (ring then).
#pragma once

#include <strata/collectives.hpp>

#include "collectives/context.hpp"

namespace strata::coll::on_host {

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

// hpZ secondary partition over the full hierarchy's level `level`.
Status build_secondary_partition(Context& c, const void* primary, size_t shard_count, void* secondary, DataType type,
                                 int level, void* stream) noexcept;
Status gather_from_secondary(Context& c, const void* secondary, size_t shard_count, void* full, DataType type,
                             int level, void* stream) noexcept;

}  // namespace strata::coll::on_host
