// The MPI library's own collectives (MPI_Allreduce, MPI_Reduce_scatter_block,
// MPI_Allgather, MPI_Bcast, MPI_Reduce; MPI_Reduce_scatter and
// MPI_Allgatherv for the uneven splits of the hierarchical algorithms),
// called through real().
//
// Counts above max_message_bytes() are split into several calls: element
// ranges for allreduce, broadcast and reduce; for allgather the same range of
// every rank's block, received through a type resized to the block stride;
// for reduce-scatter the same range of every block, packed contiguously
// first. Uneven splits that do not fit one call, and reductions of types the
// library cannot reduce (float16, bfloat16), go to the ring.
#include "collectives/host/internal.hpp"

#include "base/log.hpp"
#include "mpi/real_mpi.hpp"

#include <cstring>

namespace strata::coll::host::detail {

using mpi::real;

namespace {

// Elements per library call (in all: a reduce-scatter or all-gather call
// moves p blocks).
size_t max_elements(const Ctx& c) noexcept { return std::max<size_t>(1, max_message_bytes() / c.element); }
size_t max_block_elements(const Ctx& c) noexcept {
  return std::max<size_t>(1, max_elements(c) / static_cast<size_t>(c.size));
}

Status reduction_types(const Ctx& c, MPI_Datatype* type, MPI_Op* op) noexcept {
  if (!mpi_type_of(c.type, type) || !mpi_op_of(c.op, op)) {
    STRATA_LOG(error, kColl, "the MPI library has no reduction for this type");
    return Status::not_supported;
  }
  return Status::ok;
}

Status allreduce(const void* in, void* out, size_t n, const Ctx& c) noexcept {
  MPI_Datatype t;
  MPI_Op op;
  STRATA_TRY(reduction_types(c, &t, &op));
  const size_t step = max_elements(c);
  for (size_t off = 0; off < n; off += step) {
    const int len = static_cast<int>(std::min(step, n - off));
    const void* src = in == out ? MPI_IN_PLACE : at(in, c.bytes(off));
    STRATA_MPI_TRY(real().MPI_Allreduce(src, at(out, c.bytes(off)), len, t, op, c.comm));
  }
  return Status::ok;
}

// Equal blocks of more than one call's worth: range [off, off+len) of every
// block packed into scratch, reduced and scattered. Writes to out only touch
// ranges of blocks already packed, so out may alias in.
Status reduce_scatter_split(const void* in, void* out, size_t block, MPI_Datatype t, MPI_Op op, const Ctx& c) noexcept {
  const size_t step = max_block_elements(c);
  Scratch packed;
  STRATA_TRY(packed.allocate(c.bytes(step) * static_cast<size_t>(c.size)));
  for (size_t off = 0; off < block; off += step) {
    const size_t len = std::min(step, block - off);
    for (int i = 0; i < c.size; ++i) {
      std::memcpy(packed.data() + c.bytes(len) * static_cast<size_t>(i),
                  at(in, c.bytes(static_cast<size_t>(i) * block + off)), c.bytes(len));
    }
    STRATA_MPI_TRY(
        real().MPI_Reduce_scatter_block(packed.data(), at(out, c.bytes(off)), static_cast<int>(len), t, op, c.comm));
  }
  return Status::ok;
}

bool aliases(const void* in, const void* out, const Split& s, const Ctx& c) noexcept {
  return out == in || out == at(in, c.bytes(s.displ(c.rank)));
}

Status reduce_scatter(const void* in, void* out, const Split& s, const Ctx& c) noexcept {
  MPI_Datatype t;
  MPI_Op op;
  STRATA_TRY(reduction_types(c, &t, &op));
  const bool in_place = aliases(in, out, s, c);
  void* inout = const_cast<void*>(in);  // writable when aliased (the Flat contract)
  const size_t mine = s.count(c.rank);
  if (s.n % static_cast<size_t>(c.size) == 0) {
    const size_t block = s.n / static_cast<size_t>(c.size);
    if (s.n > max_elements(c)) return reduce_scatter_split(in, out, block, t, op, c);
    if (in_place) {
      STRATA_MPI_TRY(real().MPI_Reduce_scatter_block(MPI_IN_PLACE, inout, static_cast<int>(block), t, op, c.comm));
    } else {
      STRATA_MPI_TRY(real().MPI_Reduce_scatter_block(in, out, static_cast<int>(block), t, op, c.comm));
    }
  } else {
    if (s.n > max_elements(c)) return kRing.reduce_scatter(in, out, s, c);  // the sum of counts must fit an int
    Scratch counts_mem;
    STRATA_TRY(counts_mem.allocate(sizeof(int) * static_cast<size_t>(c.size)));
    int* counts = reinterpret_cast<int*>(counts_mem.data());
    for (int i = 0; i < c.size; ++i) counts[i] = static_cast<int>(s.count(i));
    if (in_place) {
      STRATA_MPI_TRY(real().MPI_Reduce_scatter(MPI_IN_PLACE, inout, counts, t, op, c.comm));
    } else {
      STRATA_MPI_TRY(real().MPI_Reduce_scatter(in, out, counts, t, op, c.comm));
    }
  }
  // In place, MPI leaves my block at the start of the buffer.
  if (in_place && out != inout) std::memmove(out, inout, c.bytes(mine));
  return Status::ok;
}

// Equal blocks of more than one call's worth: range [off, off+len) of every
// block per call, received through a type whose extent is the block.
Status allgather_split(void* buf, size_t block, MPI_Datatype t, const Ctx& c) noexcept {
  const size_t step = max_block_elements(c);
  for (size_t off = 0; off < block; off += step) {
    const int len = static_cast<int>(std::min(step, block - off));
    MPI_Datatype piece = MPI_DATATYPE_NULL, strided = MPI_DATATYPE_NULL;
    STRATA_MPI_TRY(real().MPI_Type_contiguous(len, t, &piece));
    Status s = mpi_check(real().MPI_Type_create_resized(piece, 0, static_cast<MPI_Aint>(c.bytes(block)), &strided),
                         "MPI_Type_create_resized");
    real().MPI_Type_free(&piece);
    if (s == Status::ok) s = mpi_check(real().MPI_Type_commit(&strided), "MPI_Type_commit");
    // In place: my range is at buf + off + rank * extent, where MPI looks.
    if (s == Status::ok) {
      s = mpi_check(real().MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, at(buf, c.bytes(off)), 1, strided, c.comm),
                    "MPI_Allgather");
    }
    if (strided != MPI_DATATYPE_NULL) real().MPI_Type_free(&strided);
    STRATA_TRY(s);
  }
  return Status::ok;
}

Status allgather(const void* mine, void* buf, const Split& s, const Ctx& c) noexcept {
  MPI_Datatype t;
  if (!mpi_move_type_of(c.type, &t)) return Status::invalid_argument;
  char* own = at(buf, c.bytes(s.displ(c.rank)));
  if (s.n % static_cast<size_t>(c.size) == 0) {
    const size_t block = s.n / static_cast<size_t>(c.size);
    if (s.n > max_elements(c)) {
      if (mine != nullptr && mine != own) std::memcpy(own, mine, c.bytes(block));
      return allgather_split(buf, block, t, c);
    }
    const void* src = mine == nullptr || mine == own ? MPI_IN_PLACE : mine;
    const int len = static_cast<int>(block);
    STRATA_MPI_TRY(real().MPI_Allgather(src, len, t, buf, len, t, c.comm));
    return Status::ok;
  }
  if (s.n > max_elements(c)) return kRing.allgather(mine, buf, s, c);  // displacements must fit an int
  if (mine != nullptr && mine != own) std::memcpy(own, mine, c.bytes(s.count(c.rank)));
  Scratch arrays;
  STRATA_TRY(arrays.allocate(2 * sizeof(int) * static_cast<size_t>(c.size)));
  int* counts = reinterpret_cast<int*>(arrays.data());
  int* displs = counts + c.size;
  for (int i = 0; i < c.size; ++i) {
    counts[i] = static_cast<int>(s.count(i));
    displs[i] = static_cast<int>(s.displ(i));
  }
  STRATA_MPI_TRY(real().MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, t, c.comm));
  return Status::ok;
}

Status broadcast(void* buf, size_t n, int root, const Ctx& c) noexcept {
  MPI_Datatype t;
  if (!mpi_move_type_of(c.type, &t)) return Status::invalid_argument;
  const size_t step = max_elements(c);
  for (size_t off = 0; off < n; off += step) {
    const int len = static_cast<int>(std::min(step, n - off));
    STRATA_MPI_TRY(real().MPI_Bcast(at(buf, c.bytes(off)), len, t, root, c.comm));
  }
  return Status::ok;
}

Status reduce(const void* in, void* out, size_t n, int root, const Ctx& c) noexcept {
  MPI_Datatype t;
  MPI_Op op;
  STRATA_TRY(reduction_types(c, &t, &op));
  const bool is_root = c.rank == root;
  const size_t step = max_elements(c);
  for (size_t off = 0; off < n; off += step) {
    const int len = static_cast<int>(std::min(step, n - off));
    const void* src = is_root && in == out ? MPI_IN_PLACE : at(in, c.bytes(off));
    void* dst = is_root ? at(out, c.bytes(off)) : nullptr;
    STRATA_MPI_TRY(real().MPI_Reduce(src, dst, len, t, op, root, c.comm));
  }
  return Status::ok;
}

}  // namespace

const Flat kLibrary = {&allreduce, &reduce_scatter, &allgather, &broadcast, &reduce};

}  // namespace strata::coll::host::detail
