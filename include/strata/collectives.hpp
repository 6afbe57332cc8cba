// Collectives over a communicator, flat or hierarchical over the levels of
// strata/topology.hpp: host buffers through MPI, device buffers through
// NCCL (RCCL in a HIP build), one communicator per level, created once per
// MPI communicator and cached with it.
//
// Semantics follow MPI: counts are elements, MPI_IN_PLACE is accepted where
// MPI accepts it (send of allreduce/reduce_scatter/allgather/reduce at the
// root), the result is identical on every rank for integers and min/max;
// for floating-point sums and products the summation order depends on the
// algorithm (bounded in docs/collectives.md).
//
// Host buffers: the call returns when the result is in `recv`. Device
// buffers: the work is ordered on Options::stream (null: the default
// stream) and the call returns once it is queued, like NCCL (the C API,
// strata/collectives.h, too); the interposer synchronises the stream for
// MPI's blocking semantics.
#pragma once

#include <strata/export.h>
#include <strata/status.hpp>

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace strata::coll {

enum class DataType { int32, int64, float32, float64, float16, bfloat16 };
enum class ReduceOp { sum, prod, min, max };

STRATA_API size_t size_of(DataType type) noexcept;
STRATA_API const char* to_string(DataType type) noexcept;
STRATA_API const char* to_string(ReduceOp op) noexcept;

enum class Algorithm {
  automatic,     // the cost model's choice (STRATA_COLL_ALGO may force one)
  library,       // flat: the MPI library's collective (host), NCCL on the whole communicator (device)
  ring,          // flat ring (reduce-scatter + all-gather rings); host
  recursive,     // flat recursive doubling / halving (Rabenseifner for allreduce); host
  hierarchical,  // every level of the topology, fastest first (2 or 3 levels)
  two_level,     // the levels within a node merged into one, then across nodes
};
STRATA_API const char* to_string(Algorithm algorithm) noexcept;
// "auto", "library", "ring", "recursive", "hierarchical", "two_level".
STRATA_API Result<Algorithm> parse_algorithm(const char* name) noexcept;

struct Options {
  Algorithm algorithm = Algorithm::automatic;
  void* stream = nullptr;  // device buffers: a cudaStream_t / hipStream_t
};

// recv[i] = op over ranks of send[i], on every rank.
STRATA_API Status allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, MPI_Comm comm,
                            const Options& options = {}) noexcept;
// Rank r receives elements [r*recv_count, (r+1)*recv_count) of the reduction
// of every rank's send (size * recv_count elements), as MPI_Reduce_scatter_block.
STRATA_API Status reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op,
                                 MPI_Comm comm, const Options& options = {}) noexcept;
// recv holds every rank's send_count elements in rank order.
STRATA_API Status allgather(const void* send, void* recv, size_t send_count, DataType type, MPI_Comm comm,
                            const Options& options = {}) noexcept;
STRATA_API Status broadcast(void* buffer, size_t count, DataType type, int root, MPI_Comm comm,
                            const Options& options = {}) noexcept;
// recv (significant at the root only) = op over ranks of send.
STRATA_API Status reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root,
                         MPI_Comm comm, const Options& options = {}) noexcept;

// ZeRO++ hpZ-style secondary partition: parameters sharded over all ranks
// (each rank holds `shard_count` elements, the full vector is the shards in
// rank order) are re-sharded once, after an update, over the ranks of the
// fast level `level` only, so that every later gather of the parameters
// runs within that level.
//
// build_secondary_partition: from my primary shard, writes my secondary
// shard (shard_count * size / group size elements: the part of the full
// vector my position in my level group owns).
STRATA_API Status build_secondary_partition(const void* primary, size_t shard_count, void* secondary, DataType type,
                                            int level, MPI_Comm comm, const Options& options = {}) noexcept;
// gather_from_secondary: every rank of the level group contributes its
// secondary shard; `full` receives the whole vector (shard_count * size
// elements, the same as an allgather of the primary shards).
STRATA_API Status gather_from_secondary(const void* secondary, size_t shard_count, void* full, DataType type, int level,
                                        MPI_Comm comm, const Options& options = {}) noexcept;

// The algorithm `automatic` resolves to for this call shape (for tools,
// benchmarks and logs; no communication after the first call on `comm`).
enum class Collective { allreduce, reduce_scatter, allgather, broadcast, reduce };
STRATA_API const char* to_string(Collective collective) noexcept;
STRATA_API Result<Algorithm> chosen_algorithm(Collective collective, size_t bytes, bool device, MPI_Comm comm) noexcept;

}  // namespace strata::coll
