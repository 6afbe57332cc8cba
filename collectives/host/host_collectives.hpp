// Collectives on host buffers, through MPI point-to-point and the library's
// own collectives (through mpi::real() only: inside the preloaded
// interposer the MPI_* names are Strata's). The caller (collectives/api.cpp)
// has resolved the algorithm; these functions never see Algorithm::automatic.
//
// Hierarchical algorithms take the levels as plain communicators, so they
// can be driven from strata::topo::Topology or from any other grouping
// (tests build them from emulated coordinates).
#pragma once

#include <strata/collectives.hpp>

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace strata::coll::host {

// One level of a hierarchy, as seen from the calling rank (see
// strata::topo::Topology::group/cross/leaders for the exact meaning).
struct LevelComms {
  MPI_Comm group = MPI_COMM_NULL;    // my group at this level
  MPI_Comm cross = MPI_COMM_NULL;    // same position in the groups of my next-level group
  MPI_Comm leaders = MPI_COMM_NULL;  // first ranks of the groups of my next-level group (null: not a leader)
};

struct Hierarchy {
  MPI_Comm comm = MPI_COMM_NULL;   // all ranks
  std::vector<LevelComms> levels;  // fastest first; may be empty (then flat)
  bool uniform = true;             // every group of every level has the same size
};

// Local reduction: inout[i] = op(inout[i], in[i]) for count elements.
// float16 and bfloat16 are reduced in float32 and rounded to nearest even.
void reduce_local(const void* in, void* inout, size_t count, DataType type, ReduceOp op) noexcept;

// The MPI datatype and op for the library path; false when the library has
// none (float16, bfloat16: those never take Algorithm::library on host).
bool mpi_type_of(DataType type, MPI_Datatype* out) noexcept;
bool mpi_op_of(ReduceOp op, MPI_Op* out) noexcept;

// Flat algorithms on one communicator: library, ring, recursive.
Status allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, Algorithm algorithm,
                 const Hierarchy& h) noexcept;
Status reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op, Algorithm algorithm,
                      const Hierarchy& h) noexcept;
Status allgather(const void* send, void* recv, size_t send_count, DataType type, Algorithm algorithm,
                 const Hierarchy& h) noexcept;
Status broadcast(void* buffer, size_t count, DataType type, int root, Algorithm algorithm, const Hierarchy& h) noexcept;
Status reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root, Algorithm algorithm,
              const Hierarchy& h) noexcept;

// hpZ secondary partition (strata/collectives.hpp), within h.levels[level].
Status build_secondary_partition(const void* primary, size_t shard_count, void* secondary, DataType type, int level,
                                 const Hierarchy& h) noexcept;
Status gather_from_secondary(const void* secondary, size_t shard_count, void* full, DataType type, int level,
                             const Hierarchy& h) noexcept;

}  // namespace strata::coll::host
