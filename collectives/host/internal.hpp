// Shared pieces of the host algorithms: element sizes, the 3-operand
// reduction, MPI error checks, scratch memory, the block split of a vector,
// the per-communicator call context and the table of flat algorithms that
// the public entry points and the hierarchical algorithms both use.
//
// Conventions of every algorithm here:
//   - counts are elements, offsets are elements, size_t throughout; byte
//     sizes are element counts times Ctx::element;
//   - a reduction of two partial results is always combine(lower, higher):
//     the partial of the lower rank (in the algorithm's numbering) is the left
//     operand, so an element's reduction tree is fixed by the algorithm and the
//     rank count alone, and every rank ends with the same bits;
//   - nothing here calls an MPI_* name: mpi::real() only.
#pragma once

#include "collectives/host/host_collectives.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace strata::coll::host::detail {

bool valid_type(DataType type) noexcept;
bool valid_op(ReduceOp op) noexcept;
size_t element_size(DataType type) noexcept;  // 0 for an invalid type
// Types the MPI library can move (float16/bfloat16 as MPI_UINT16_T) but not
// always reduce (see mpi_type_of).
bool mpi_move_type_of(DataType type, MPI_Datatype* out) noexcept;

// out[i] = op(a[i], b[i]) for count elements. out may be a or b (the in-place
// forms used by the algorithms); any other overlap is not allowed.
void combine(const void* a, const void* b, void* out, size_t count, DataType type, ReduceOp op) noexcept;

// Maps an MPI return code to a Status, logging the failing call.
Status mpi_check(int rc, const char* what) noexcept;
#define STRATA_MPI_TRY(call) STRATA_TRY(::strata::coll::host::detail::mpi_check((call), #call))

// The largest message handed to MPI in one call, in bytes (point-to-point
// pieces, and the element count of one library collective call times the
// element size). Below INT_MAX so that any count fits an int. Tests lower it
// to exercise the splitting with small buffers; nothing else should.
size_t max_message_bytes() noexcept;
void set_max_message_bytes(size_t bytes) noexcept;  // 0 restores the default

// Heap scratch without exceptions.
class Scratch {
 public:
  Status allocate(size_t bytes) noexcept;
  char* data() noexcept { return data_.get(); }

 private:
  std::unique_ptr<char[]> data_;
};

// n elements in `parts` blocks, in order; the first n % parts blocks have one
// element more. With n a multiple of parts every block is n / parts
// (reduce_scatter_block and allgather). displ(parts) == n.
struct Split {
  size_t n = 0;
  int parts = 1;
  size_t count(int i) const noexcept { return n / parts + (static_cast<size_t>(i) < n % parts ? 1 : 0); }
  size_t displ(int i) const noexcept {
    return static_cast<size_t>(i) * (n / parts) + std::min<size_t>(static_cast<size_t>(i), n % parts);
  }
  size_t largest() const noexcept { return count(0); }
};

// One call on one communicator.
struct Ctx {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  DataType type = DataType::int32;
  ReduceOp op = ReduceOp::sum;
  size_t element = 4;
  size_t bytes(size_t elements) const noexcept { return elements * element; }
  void combine(const void* a, const void* b, void* out, size_t count) const noexcept {
    detail::combine(a, b, out, count, type, op);
  }
};
Status make_ctx(MPI_Comm comm, DataType type, ReduceOp op, Ctx* out) noexcept;

// Point-to-point on ctx.comm, split into max_message_bytes() pieces; a
// zero-byte message is never sent, so both sides must agree on the sizes.
Status sendrecv(const void* send, size_t send_bytes, int dest, void* recv, size_t recv_bytes, int source,
                const Ctx& c) noexcept;
Status send(const void* buf, size_t bytes, int dest, const Ctx& c) noexcept;
Status recv(void* buf, size_t bytes, int source, const Ctx& c) noexcept;

// A family of flat algorithms on one communicator (ring, recursive, library).
// Buffers are those of the MPI call with MPI_IN_PLACE resolved:
//   allreduce       in (n) -> out (n); in == out is in place.
//   reduce_scatter  in (split.n) -> out (split.count(rank)); out may be in or
//                   in + split.displ(rank) (then in is writable and its other
//                   blocks are clobbered).
//   allgather       mine (split.count(rank)) -> buf (split.n); mine null: my
//                   block is already at buf + split.displ(rank).
//   broadcast       buf (n) from root.
//   reduce          in (n) -> out (n, at root only; null elsewhere); in == out
//                   at the root is in place.
struct Flat {
  Status (*allreduce)(const void* in, void* out, size_t n, const Ctx& c) noexcept;
  Status (*reduce_scatter)(const void* in, void* out, const Split& split, const Ctx& c) noexcept;
  Status (*allgather)(const void* mine, void* buf, const Split& split, const Ctx& c) noexcept;
  Status (*broadcast)(void* buf, size_t n, int root, const Ctx& c) noexcept;
  Status (*reduce)(const void* in, void* out, size_t n, int root, const Ctx& c) noexcept;
};
extern const Flat kRing;
extern const Flat kRecursive;
extern const Flat kLibrary;
// library, ring or recursive; null for the others.
const Flat* flat_of(Algorithm algorithm) noexcept;

// Hierarchical algorithms over h.levels (see hierarchical.cpp for how the
// levels are used). `inner` is the flat family run inside each level for
// data movement; reductions of types the library cannot reduce take the
// ring instead.
Status hier_allreduce(const void* in, void* out, size_t n, DataType type, ReduceOp op, const Hierarchy& h,
                      const Flat& inner) noexcept;
Status hier_reduce_scatter(const void* in, void* out, size_t recv_count, DataType type, ReduceOp op, const Hierarchy& h,
                           const Flat& inner) noexcept;
Status hier_allgather(const void* mine, void* out, size_t send_count, DataType type, const Hierarchy& h,
                      const Flat& inner) noexcept;
Status hier_broadcast(void* buf, size_t n, DataType type, int root, const Hierarchy& h, const Flat& inner) noexcept;
Status hier_reduce(const void* in, void* out, size_t n, DataType type, ReduceOp op, int root, const Hierarchy& h,
                   const Flat& inner) noexcept;

// The leader-based forms (hierarchical_leaders.cpp), for uneven hierarchies.
Status leaders_allreduce(const void* in, void* out, size_t n, DataType type, ReduceOp op, const Hierarchy& h,
                         const Flat& inner) noexcept;
Status leaders_reduce_scatter(const void* in, void* out, size_t recv_count, DataType type, ReduceOp op,
                              const Hierarchy& h, const Flat& inner) noexcept;
Status leaders_allgather(const void* mine, void* out, size_t send_count, DataType type, const Hierarchy& h,
                         const Flat& inner) noexcept;

// The flat family that reduces `type` when `inner` is asked for: the library
// has no float16/bfloat16 reductions, the ring stands in.
const Flat& reducing(const Flat& inner, DataType type) noexcept;

inline char* at(void* base, size_t bytes) noexcept { return static_cast<char*>(base) + bytes; }
inline const char* at(const void* base, size_t bytes) noexcept { return static_cast<const char*>(base) + bytes; }

}  // namespace strata::coll::host::detail
