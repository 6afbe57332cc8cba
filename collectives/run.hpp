// Running a collective on the route decide() chose (routing.hpp). Each rank
// stages only its own buffers: into host memory on the host and library
// routes (on_host.hpp), into device memory on the NCCL route when its
// buffers are in host memory (the ranks agreed on device memory at an
// earlier call of the same collective and size class). Device work is
// ordered on `stream` and the call returns once it is queued, as the
// public API documents.
#pragma once

#include "collectives/routing.hpp"

namespace strata::coll {

Status run_allreduce(const Decision& d, const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                     void* stream) noexcept;
Status run_reduce_scatter(const Decision& d, const void* send, void* recv, size_t recv_count, DataType type,
                          ReduceOp op, void* stream) noexcept;
Status run_allgather(const Decision& d, const void* send, void* recv, size_t send_count, DataType type,
                     void* stream) noexcept;
Status run_broadcast(const Decision& d, void* buffer, size_t count, DataType type, int root, void* stream) noexcept;
Status run_reduce(const Decision& d, const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root,
                  void* stream) noexcept;

}  // namespace strata::coll
