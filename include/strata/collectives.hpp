// Collectives over a communicator, flat or hierarchical over the levels of
// strata/topology.hpp: host buffers through MPI, device buffers through
// NCCL (RCCL in a HIP build), one communicator per level, created once per
// MPI communicator and cached with it; and point-to-point sends and
// receives of host or device buffers on the same paths (below).
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

// ---------------------------------------------------------------------------
// Point-to-point: `count` elements of `type` to or from rank `peer` of
// `comm` (docs/collectives.md). Both ends pass the same count (in bytes)
// and the same kind of memory, host or device; the type only sizes the
// message. Messages between two ranks are matched in the order they are
// posted (NCCL has no tags).
//
// Device buffers go to NCCL (RCCL in a HIP build): ncclSend / ncclRecv on
// the NCCL communicator of `comm` that the collectives use, ordered on
// Options::stream; the call returns once queued. NCCL older than 2.7 has no
// send/receive: not_supported. The first device call on a communicator
// creates its context and NCCL communicator, which is collective over
// `comm`: every rank must make one (or a device collective on `comm`).
// Where NCCL is missing or two ranks share a GPU, device buffers are staged
// through host memory after the work queued on the stream and moved like
// host buffers; received bytes are copied back before the call returns.
//
// Host buffers go through MPI on `comm` itself with the tag kP2pTag (an
// application's own messages on `comm` must not use it), in pieces of at
// most 1 GiB; the call returns when the message is complete. A received
// message shorter than `count` is invalid_argument (logged).
//
// peer MPI_PROC_NULL: nothing moves. count 0: nothing moves (both ends
// agree). A message to oneself only within a group (or exchange()).
inline constexpr int kP2pTag = 0x5c02;

STRATA_API Status send(const void* buf, size_t count, DataType type, int peer, MPI_Comm comm,
                       const Options& options = {}) noexcept;
STRATA_API Status recv(void* buf, size_t count, DataType type, int peer, MPI_Comm comm,
                       const Options& options = {}) noexcept;

// Groups, as ncclGroupStart / ncclGroupEnd: sends and receives made between
// group_start() and the matching group_end() are posted together when the
// outermost group ends, so a rank can send to and receive from any number
// of peers (itself included) without the order of its calls deadlocking.
// Per thread; groups nest. Inside a group send() and recv() check their
// arguments, choose the path (creating the NCCL communicator where needed)
// and return; their buffers must stay valid, and a send buffer unchanged,
// until group_end() returns (host memory) or until the stream has passed the
// transfer (device memory). group_end() returns when the host messages are
// complete and the device ones queued, with the first failure.
STRATA_API Status group_start() noexcept;
STRATA_API Status group_end() noexcept;
// Is a group open on this thread, and how many outermost groups has this
// thread ended (for layers that complete transfers after their group:
// strata/kokkos_nccl.hpp)?
STRATA_API bool in_group() noexcept;
STRATA_API uint64_t groups_ended() noexcept;

// A send to `dest` and a receive from `source` as one group: the shift of a
// halo exchange. dest == source == my rank copies through the transport.
STRATA_API Status exchange(const void* send_buf, size_t send_count, int dest, void* recv_buf, size_t recv_count,
                           int source, DataType type, MPI_Comm comm, const Options& options = {}) noexcept;

// *done = whether all work queued on `stream` (a cudaStream_t / hipStream_t;
// null: the default stream) has finished, without waiting. not_supported
// without a GPU backend.
STRATA_API Status stream_done(void* stream, bool* done) noexcept;

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
